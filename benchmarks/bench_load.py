"""Load on the key endpoints, against gunicorn on loopback with production settings.

Usage: .venv/bin/python benchmarks/bench_load.py [--duration 10] [--clients 8]
       [--workers 3] [--database-url URL] [--json FILE]

Sets up a scratch database (SQLite by default; pass a PostgreSQL URL to use
it) with the reference 8x8, c = 8 machine half full, starts gunicorn (3 sync
workers as in docker-compose.yml, ``hxportal.settings.production`` over plain
HTTP) on 127.0.0.1, then
drives each endpoint with wrk (Debian's ``wrk``; ``apt-get install -y wrk``):
``--clients`` open connections on 2 threads for ``--duration`` seconds each,
a bounded closed-loop load, after a 1 s warm-up per endpoint. Endpoints: the
node list, a job's detail, a cached recommendation (the first, uncached answer
is timed separately) and a 1,000-row benchmark CSV upload (each replaces the
previous one). Prints requests,
throughput, p50, p99, max and errors per endpoint; the first row (the machine
detail) is the baseline of the run. Exits 1 when any request failed (a status
of 400 or more, a socket error or a timeout). Targets on a 2-core machine:
reads p99 under 100 ms at 8 clients, no errors. wrk's latencies are those of
a closed loop (it waits for each answer), so they understate the tail an open
arrival rate would see.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from _databases import fresh_postgres

ROOT = Path(__file__).resolve().parents[1]
LUA = Path(__file__).with_name("load.lua")
WRK = shutil.which("wrk")
SETUP = r"""
import django; django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from allocation.services import jobs, machines
from hxportal import services as accounts
m = machines.create_machine(name="ref", sides=[8, 8], concentration=8)
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
    """One request with urllib (warm-up and the uncached first answer)."""
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


def run_wrk(url: str, *, token: str, clients: int, duration: int, work: Path,
            body_file: Path | None = None, content_type: str = "") -> dict:
    """Drive ``url`` with wrk (GET, or POST of ``body_file``); its Lua script reports."""
    out = work / "wrk.json"
    out.unlink(missing_ok=True)
    env = {**os.environ, "HX_LOAD_TOKEN": token, "HX_LOAD_OUT": str(out),
           "HX_LOAD_METHOD": "POST" if body_file else "GET",
           "HX_LOAD_BODY_FILE": str(body_file or ""), "HX_LOAD_CONTENT_TYPE": content_type}
    done = subprocess.run([WRK, "-t", str(min(2, clients)), "-c", str(clients), "-d",
                           f"{duration}s", "--timeout", "10s", "-s", str(LUA), url],
                          env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not out.exists():
        raise RuntimeError(f"wrk failed ({done.returncode}): {done.stdout}{done.stderr}")
    raw = json.loads(out.read_text())
    seconds = raw["duration_us"] / 1e6
    return {"requests": raw["requests"], "rps": raw["requests"] / seconds,
            "p50": raw["p50_us"] / 1000, "p99": raw["p99_us"] / 1000,
            "max": raw["max_us"] / 1000,
            "errors": sum(raw[k] for k in ("connect", "read", "write", "status", "timeout"))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=int, default=10,
                        help="seconds of load per endpoint (default 10)")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--workers", type=int, default=3, help="gunicorn workers")
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = parser.parse_args()
    if WRK is None:
        print("wrk not found: apt-get install -y wrk", file=sys.stderr)
        return 2
    data_dir = Path(tempfile.mkdtemp(prefix="hxbench-"))
    if args.database_url and args.database_url.startswith("postgres"):
        args.database_url = fresh_postgres(args.database_url, "hxbench_load")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "hxportal.settings.production",
           "HX_DATA_DIR": str(data_dir), "SECRET_KEY": "bench-" + "x9Y" * 20,
           "ALLOWED_HOSTS": "127.0.0.1", "SECURE_SSL_REDIRECT": "0", "LOG_LEVEL": "WARNING",
           "DATABASE_URL": args.database_url or f"sqlite:///{data_dir}/bench.sqlite3",
           "STATIC_ROOT": f"{data_dir}/static"}
    out = subprocess.run([sys.executable, "-c", SETUP], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    job_id, token = out[-2], out[-1]
    port = free_port()
    subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"],
                   cwd=ROOT, env=env, check=True)
    server = subprocess.Popen([str(Path(sys.executable).with_name("gunicorn")),
                               "hxportal.wsgi:application", "--bind", f"127.0.0.1:{port}",
                               "--workers", str(args.workers), "--log-level", "warning"],
                              cwd=ROOT, env=env)
    base = f"http://127.0.0.1:{port}/api/v1"
    rows = []
    try:
        for _ in range(100):
            try:
                call(f"{base}/machines/", token)
                break
            except OSError:
                time.sleep(0.2)
        first, code = call(f"{base}/recommendations/", token, BODY)
        print(f"first (uncached) recommendation: {first * 1000:.0f} ms, HTTP {code}")
        body_json = data_dir / "recommendation.json"
        body_json.write_text(json.dumps(BODY))
        cases = [
            ("GET machines/ref/ (baseline)", f"{base}/machines/ref/", None, ""),
            ("GET nodes/?limit=50", f"{base}/nodes/?machine=ref&limit=50", None, ""),
            ("GET jobs/<id>/", f"{base}/jobs/{job_id}/", None, ""),
            ("POST recommendations/ (cached)", f"{base}/recommendations/", body_json,
             "application/json"),
            ("POST benchmarks/ (1,000 rows)", f"{base}/benchmarks/", data_dir / "upload.csv",
             "text/csv"),
        ]
        print(f"wrk: {args.clients} connections, {args.duration} s per endpoint; "
              f"gunicorn: {args.workers} workers; database: {env['DATABASE_URL'][:8]}")
        print(f"{'endpoint':<34}{'req':>7}{'req/s':>8}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}"
              f"{'errors':>8}")
        for label, url, body_file, content_type in cases:
            request = {"token": token, "clients": args.clients, "work": data_dir,
                       "body_file": body_file, "content_type": content_type}
            run_wrk(url, duration=1, **request)  # warm-up, not reported
            row = run_wrk(url, duration=args.duration, **request)
            rows.append({"endpoint": label, **row})
            print(f"{label:<34}{row['requests']:>7}{row['rps']:>8.1f}{row['p50']:>9.1f}"
                  f"{row['p99']:>9.1f}{row['max']:>9.1f}{row['errors']:>8}")
    finally:
        server.terminate()
        server.wait(timeout=20)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 1 if any(row["errors"] for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
