"""Latency of cached recommendations under a burst, against gunicorn on loopback.

Usage: .venv/bin/python benchmarks/bench_recommendation.py [--requests 50] [--clients 8]
       [--database-url URL]

Sets up a scratch database (SQLite by default) with the reference 8x8, c = 8
machine half full, starts gunicorn (2 workers) on 127.0.0.1, asks for one
recommendation (analytic, so no worker is needed), then fires ``--requests``
identical questions from ``--clients`` threads: every answer after the first
comes from the cache. Prints p50/p99/max latency and the error count, plus a
baseline measured in the same run: GET /api/v1/machines/ref/ (a plain read).
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
print(accounts.issue_token(u, "bench"))
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
    with ThreadPoolExecutor(clients) as pool:
        results = list(pool.map(lambda _: call(url, token, body), range(n)))
    times = sorted(t * 1000 for t, _ in results)
    errors = sum(code >= 400 for _, code in results)
    return {"p50": statistics.median(times), "p99": times[min(len(times) - 1,
                                                               int(0.99 * len(times)))],
            "max": times[-1], "errors": errors}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    data_dir = tempfile.mkdtemp(prefix="hxbench-")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "hxportal.settings.local",
           "HX_DATA_DIR": data_dir,
           "DATABASE_URL": args.database_url or f"sqlite:///{data_dir}/bench.sqlite3"}
    token = subprocess.run([sys.executable, "-c", SETUP], cwd=ROOT, env=env, check=True,
                           capture_output=True, text=True).stdout.split()[-1]
    port = free_port()
    server = subprocess.Popen([str(Path(sys.executable).with_name("gunicorn")),
                               "hxportal.wsgi:application", "--bind", f"127.0.0.1:{port}",
                               "--workers", "2", "--log-level", "warning"],
                              cwd=ROOT, env=env)
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
        read = burst(f"{base}/machines/ref/", token, None, args.requests, args.clients)
        cached = burst(f"{base}/recommendations/", token, BODY, args.requests, args.clients)
        print(f"{'burst of ' + str(args.requests) + ' from ' + str(args.clients) + ' clients':<40}"
              f"{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}{'errors':>8}")
        for label, row in (("baseline GET /machines/ref/", read),
                           ("cached POST /recommendations/", cached)):
            print(f"{label:<40}{row['p50']:>9.1f}{row['p99']:>9.1f}{row['max']:>9.1f}"
                  f"{row['errors']:>8}")
        print(f"cached / baseline p50 ratio: {cached['p50'] / read['p50']:.2f}")
    finally:
        server.terminate()
        server.wait(timeout=20)


if __name__ == "__main__":
    main()
