"""Load on the key endpoints, against gunicorn on loopback with production settings.

Usage: .venv/bin/python benchmarks/bench_load.py [--requests 200] [--clients 8]
       [--database-url URL]

Sets up a scratch database (SQLite by default; pass a PostgreSQL URL to use
it) with the reference 8x8, c = 8 machine half full, starts gunicorn (2 sync
workers, ``hxportal.settings.production`` over plain HTTP) on 127.0.0.1, then
drives each endpoint with ``--clients`` concurrent clients (a bounded number of
requests, no open-ended loop): the node list, a job's detail, a cached
recommendation (the first, uncached answer is timed separately) and a
1,000-row benchmark upload. Prints throughput, p50, p99, max and errors per
endpoint; the first row (the machine detail) is the baseline of the run.
Targets on a 2-core machine: reads p99 under 100 ms at 8 clients, no errors.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _databases import fresh_postgres

ROOT = Path(__file__).resolve().parents[1]
SETUP = r"""
import django; django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from allocation import jobs, services
from hxportal import services as accounts
m = services.create_machine(name="ref", sides=[8, 8], concentration=8)
u, _ = accounts.upsert_user("bench", "operator")
for i, policy in enumerate(["row", "diagonal", "row", "diagonal"]):
    jobs.submit_job(owner=u, machine=m, name=f"bg{i}", node_count=64, pattern="all-to-all",
                    policy=policy)
rows = ["job,benchmark,node,seconds"]
for job in jobs.Job.objects.order_by("pk"):
    for name in ("stream", "dgemm", "ping", "io"):
        for host in job.allocations.values_list("node__hostname", flat=True):
            rows.append(f"{job.pk},{name},{host},0.0167")
import os, pathlib
pathlib.Path(os.environ["HX_DATA_DIR"], "upload.csv").write_text("\n".join(rows[:1001]))
print(jobs.Job.objects.order_by("pk").first().pk, accounts.issue_token(u, "bench"))
"""
BODY = {"machine": "ref", "node_count": 64, "pattern": "all-to-all", "t_cmpt": 100,
        "t_comm": 50, "p_abn": 0.026, "alpha_abn": 3.53, "t_bench": 0.0167, "simulate": False}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def call(url: str, token: str, body: dict | None = None) -> tuple[float, int]:
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    request = urllib.request.Request(  # noqa: S310 - http on loopback only
        url, data=data, method="POST" if data else "GET", headers=headers)
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - loopback
            response.read()
            code = response.status
    except urllib.error.HTTPError as exc:
        code = exc.code
    return time.perf_counter() - start, code


def burst(url: str, token: str, body: dict | None, n: int, clients: int) -> dict:
    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        results = list(pool.map(lambda _: call(url, token, body), range(n)))
    wall = time.perf_counter() - start
    times = sorted(t * 1000 for t, _ in results)
    errors = sum(code >= 400 for _, code in results)
    return {"rps": n / wall, "p50": statistics.median(times),
            "p99": times[min(len(times) - 1, int(0.99 * len(times)))],
            "max": times[-1], "errors": errors}


def burst_upload(url: str, token: str, body: bytes, n: int, clients: int) -> dict:
    """The same 1,000-row CSV upload again and again (each replaces the previous)."""

    def post(_):
        request = urllib.request.Request(  # noqa: S310 - http on loopback only
            url, data=body, method="POST",
            headers={"Authorization": f"Token {token}", "Content-Type": "text/csv"})
        start = time.perf_counter()
        try:
            with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310
                response.read()
                code = response.status
        except urllib.error.HTTPError as exc:
            code = exc.code
        return time.perf_counter() - start, code

    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        results = list(pool.map(post, range(n)))
    wall = time.perf_counter() - start
    times = sorted(t * 1000 for t, _ in results)
    return {"rps": n / wall, "p50": statistics.median(times),
            "p99": times[min(len(times) - 1, int(0.99 * len(times)))], "max": times[-1],
            "errors": sum(code >= 400 for _, code in results)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    data_dir = tempfile.mkdtemp(prefix="hxbench-")
    if args.database_url and args.database_url.startswith("postgres"):
        args.database_url = fresh_postgres(args.database_url, "hxbench_load")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "hxportal.settings.production",
           "HX_DATA_DIR": data_dir, "SECRET_KEY": "bench-" + "x9Y" * 20,
           "ALLOWED_HOSTS": "127.0.0.1", "SECURE_SSL_REDIRECT": "0", "LOG_LEVEL": "WARNING",
           "DATABASE_URL": args.database_url or f"sqlite:///{data_dir}/bench.sqlite3"}
    out = subprocess.run([sys.executable, "-c", SETUP], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    job_id, token = out[-2], out[-1]
    port = free_port()
    subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"],
                   cwd=ROOT, env={**env, "STATIC_ROOT": f"{data_dir}/static"}, check=True)
    server = subprocess.Popen([str(Path(sys.executable).with_name("gunicorn")),
                               "hxportal.wsgi:application", "--bind", f"127.0.0.1:{port}",
                               "--workers", "2", "--log-level", "warning"],
                              cwd=ROOT, env={**env, "STATIC_ROOT": f"{data_dir}/static"})
    base = f"http://127.0.0.1:{port}/api/v1"
    try:
        for _ in range(100):
            try:
                call(f"{base}/machines/", token)
                break
            except OSError:
                time.sleep(0.2)
        first, code = call(f"{base}/recommendations/", token, BODY)
        print(f"first (uncached) recommendation: {first * 1000:.0f} ms, HTTP {code}")
        cases = [
            ("GET machines/ref/ (baseline)", f"{base}/machines/ref/", None, args.requests),
            ("GET nodes/?limit=50", f"{base}/nodes/?machine=ref&limit=50", None,
             args.requests),
            ("GET jobs/<id>/", f"{base}/jobs/{job_id}/", None, args.requests),
            ("POST recommendations/ (cached)", f"{base}/recommendations/", BODY,
             args.requests),
            ("POST benchmarks/ (1,000 rows)", f"{base}/benchmarks/", None, 40),
        ]
        print(f"{args.clients} concurrent clients")
        print(f"{'endpoint':<34}{'req':>5}{'req/s':>8}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}"
              f"{'errors':>8}")
        for label, url, body, n in cases:
            if label.startswith("POST benchmarks"):
                csv_body = (Path(data_dir) / "upload.csv").read_bytes()
                row = burst_upload(url, token, csv_body, n, args.clients)
            else:
                row = burst(url, token, body, n, args.clients)
            print(f"{label:<34}{n:>5}{row['rps']:>8.1f}{row['p50']:>9.1f}{row['p99']:>9.1f}"
                  f"{row['max']:>9.1f}{row['errors']:>8}")
    finally:
        server.terminate()
        server.wait(timeout=20)


if __name__ == "__main__":
    main()
