"""Load on the key endpoints, against gunicorn on loopback with production settings.

Usage: .venv/bin/python benchmarks/bench_load.py [--duration 10] [--clients 8]
       [--mixed-clients 8,32] [--jobs 1000] [--workers 3] [--database-url URL]
       [--json FILE]

Sets up a scratch database (SQLite by default; with a PostgreSQL URL, the
database ``<its name>_load`` on that server, dropped and created) with the
reference 8x8, c = 8 machine half full and a history of ``--jobs`` finished
jobs of 8 to 64 nodes, starts gunicorn (3 sync workers as in
docker-compose.yml, ``hxportal.settings.production`` over plain HTTP) on
127.0.0.1, then drives each endpoint with wrk (Debian's ``wrk``;
``apt-get install -y wrk``): ``--clients`` open connections on 2 threads for
``--duration`` seconds each, a bounded closed-loop load, after a 1 s warm-up
per endpoint, and a pause of about one p99 after each run (wrk leaves up to
one request per connection behind). Endpoints: the machine detail, the node
list, a job's detail, the job list (a page of 50, and a page of 1,000 on one
connection: its latency), mixed reads (the machine list and
detail, the node list, the job list and a job, in turn on each wrk thread) at
each of ``--mixed-clients``, a cached recommendation (the first, uncached
answer is timed separately) and a 1,000-row benchmark CSV upload (each
replaces the previous one). Prints requests, throughput, its ratio to the
node list's in the same run (other load on the machine moves both alike),
p50, p99, max and errors per endpoint. Exits 1 when any request failed (a
status of 400 or more, a socket error or a timeout). Targets on a 2-core
machine: reads p99 under 100 ms at 8 clients, no errors. wrk's latencies are
those of a closed loop (it waits for each answer), so they understate the
tail an open arrival rate would see.
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
first = jobs.Job.objects.order_by("pk").first().pk
for i in range(int(os.environ["HX_LOAD_JOBS"])):  # history: finished jobs of 8 to 64 nodes
    job = jobs.submit_job(owner=u, machine=m, name=f"h{i}", node_count=(8, 16, 32, 64)[i % 4],
                          pattern="all-to-all", seed=i,
                          policy=("row", "diagonal", "random_endpoint", "rectangular")[i % 4])
    jobs.finish_job(job, "completed", 60.0)
print(first, accounts.issue_token(u, "bench"))
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
            body_file: Path | None = None, content_type: str = "",
            paths: tuple[str, ...] = ()) -> dict:
    """Drive ``url`` with wrk (GET, or POST of ``body_file``; ``paths``: GETs of
    these paths in turn on the same server); its Lua script reports."""
    out = work / "wrk.json"
    out.unlink(missing_ok=True)
    env = {**os.environ, "HX_LOAD_TOKEN": token, "HX_LOAD_OUT": str(out),
           "HX_LOAD_METHOD": "POST" if body_file else "GET",
           "HX_LOAD_BODY_FILE": str(body_file or ""), "HX_LOAD_CONTENT_TYPE": content_type,
           "HX_LOAD_PATHS": " ".join(paths)}
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


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=int, default=10,
                        help="seconds of load per endpoint (default 10)")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--mixed-clients", default="8,32",
                        help="connections of each mixed-read row (default 8,32)")
    parser.add_argument("--jobs", type=int, default=1000,
                        help="finished jobs in the history (default 1000)")
    parser.add_argument("--workers", type=int, default=3, help="gunicorn workers")
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    return parser.parse_args()


def settle(row: dict) -> dict:
    """Wait until gunicorn has worked off the requests wrk left behind (about one p99:
    a closed loop's latency is the backlog it keeps), so the next row starts idle."""
    time.sleep(min(15.0, row["p99"] / 1000 + 0.2))
    return row


def cases(base: str, job_id: str, data_dir: Path, clients: int,
          mixed_clients: list[int]) -> list[dict]:
    """The rows of the run: label, URL, clients and what wrk sends."""
    path = base.split("/", 3)[3]
    mixed = tuple(f"/{path}/{p}" for p in (
        "machines/", "machines/ref/", "nodes/?machine=ref&limit=50", "jobs/?limit=50",
        f"jobs/{job_id}/"))
    body_json = data_dir / "recommendation.json"
    body_json.write_text(json.dumps(BODY))
    get = {"clients": clients, "body_file": None, "content_type": ""}
    rows = [
        {"label": "GET machines/ref/", "url": f"{base}/machines/ref/", **get},
        {"label": "GET nodes/?limit=50", "url": f"{base}/nodes/?machine=ref&limit=50", **get},
        {"label": "GET jobs/<id>/", "url": f"{base}/jobs/{job_id}/", **get},
        {"label": "GET jobs/?limit=50", "url": f"{base}/jobs/?limit=50", **get},
        {"label": "GET jobs/?limit=1000", "url": f"{base}/jobs/?limit=1000", **get,
         "clients": 1},
    ]
    rows += [{"label": f"GET mixed reads, {n} clients", "url": f"{base}/machines/",
              **get, "clients": n, "paths": mixed} for n in mixed_clients]
    rows += [
        {"label": "POST recommendations/ (cached)", "url": f"{base}/recommendations/",
         "clients": clients, "body_file": body_json, "content_type": "application/json"},
        {"label": "POST benchmarks/ (1,000 rows)", "url": f"{base}/benchmarks/",
         "clients": clients, "body_file": data_dir / "upload.csv", "content_type": "text/csv"},
    ]
    return rows


def drive(base: str, token: str, job_id: str, data_dir: Path, args: argparse.Namespace,
          mixed_clients: list[int]) -> list[dict]:
    """Warm up and load every row in turn; print each as it ends."""
    print(f"{'endpoint':<34}{'clients':>8}{'req':>7}{'req/s':>8}{'x nodes':>8}{'p50 ms':>9}"
          f"{'p99 ms':>9}{'max ms':>9}{'errors':>8}")
    rows: list[dict] = []
    nodes_rps = None
    for case in cases(base, job_id, data_dir, args.clients, mixed_clients):
        label, url = case.pop("label"), case.pop("url")
        request = {"token": token, "work": data_dir, **case}
        settle(run_wrk(url, duration=1, **request))  # warm-up, not reported
        row = settle(run_wrk(url, duration=args.duration, **request))
        if label.startswith("GET nodes/"):
            nodes_rps = row["rps"]
        ratio = row["rps"] / nodes_rps if nodes_rps else float("nan")
        rows.append({"endpoint": label, "clients": case["clients"], **row,
                     "vs_nodes": ratio})
        print(f"{label:<34}{case['clients']:>8}{row['requests']:>7}{row['rps']:>8.1f}"
              f"{ratio:>8.2f}{row['p50']:>9.1f}{row['p99']:>9.1f}{row['max']:>9.1f}"
              f"{row['errors']:>8}", flush=True)
    return rows


def main() -> int:
    args = parse_args()
    mixed_clients = [int(n) for n in args.mixed_clients.split(",") if n.strip()]
    if WRK is None:
        print("wrk not found: apt-get install -y wrk", file=sys.stderr)
        return 2
    data_dir = Path(tempfile.mkdtemp(prefix="hxbench-"))
    if args.database_url and args.database_url.startswith("postgres"):
        own = args.database_url.rsplit("/", 1)[1].split("?")[0] or "hxbench"
        args.database_url = fresh_postgres(args.database_url, f"{own}_load")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "hxportal.settings.production",
           "HX_DATA_DIR": str(data_dir), "SECRET_KEY": "bench-" + "x9Y" * 20,
           "ALLOWED_HOSTS": "127.0.0.1", "SECURE_SSL_REDIRECT": "0", "LOG_LEVEL": "WARNING",
           "DATABASE_URL": args.database_url or f"sqlite:///{data_dir}/bench.sqlite3",
           "STATIC_ROOT": f"{data_dir}/static", "HX_LOAD_JOBS": str(args.jobs)}
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
    try:
        for _ in range(100):
            try:
                call(f"{base}/machines/", token)
                break
            except OSError:
                time.sleep(0.2)
        first, code = call(f"{base}/recommendations/", token, BODY)
        print(f"first (uncached) recommendation: {first * 1000:.0f} ms, HTTP {code}")
        print(f"wrk: {args.clients} connections unless shown, {args.duration} s per row; "
              f"gunicorn: {args.workers} workers; database: {env['DATABASE_URL'][:8]}; "
              f"{args.jobs + 4} jobs")
        rows = drive(base, token, job_id, data_dir, args, mixed_clients)
    finally:
        server.terminate()
        server.wait(timeout=20)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 1 if any(row["errors"] for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
