"""Time ingesting 100,000 benchmark rows on SQLite and PostgreSQL (target: under 10 s).

Usage: .venv/bin/python benchmarks/bench_ingest.py [--postgres URL] [--rows N]
Each backend gets a fresh database with a 16x16, c = 8 machine (2,048 nodes)
and 200 jobs of 500 nodes. Figures:

* ``csv http``: POST /api/v1/benchmarks/ with a text/csv body of N rows through
  Django's test client (auth, parsing, validation, job and node lookup, one
  transaction of bulk inserts);
* ``csv repost``: the same upload again (deletes the N rows, inserts N);
* ``json http``: one job's 2,048 nodes as a JSON upload.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _databases import fresh_postgres

ROOT = Path(__file__).resolve().parents[1]
CHILD = r"""
import json, sys, time, django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from django.test import Client
from allocation.services import machines
from allocation.models import Job
from health.models import BenchmarkResult
from hxportal import services as accounts
rows = int(sys.argv[1])
machine = machines.create_machine(name="hx", sides=[16, 16], concentration=8)
user, _ = accounts.upsert_user("bench", "operator", password="pw-bench-12345")
key = accounts.issue_token(user, "bench")
per_job = 500
n_jobs = -(-rows // per_job)
jobs = Job.objects.bulk_create(Job(name=f"j{i}", external_id=str(100000 + i), owner=user,
                                   machine=machine, node_count=per_job) for i in range(n_jobs))
lines = ["job,benchmark,node,seconds,measured_at"]
for r in range(rows):
    j, k = divmod(r, per_job)
    node = (j * 37 + k) % 2048 + 1
    seconds = 0.0167 * (3.5 if (r * 7919) % 997 < 26 else 1.0) * (1 + ((r * 31) % 17) / 1000)
    lines.append(f"{100000 + j},stream,hx{node:04d},{seconds:.6f},2026-11-01T00:00:00Z")
text = "\n".join(lines) + "\n"
client = Client(HTTP_AUTHORIZATION=f"Token {key}", HTTP_HOST="localhost")
out = {}
for label in ("csv http", "csv repost"):
    start = time.perf_counter()
    response = client.post("/api/v1/benchmarks/", text, content_type="text/csv")
    out[label] = time.perf_counter() - start
    assert response.status_code == 201, response.content[:500]
assert BenchmarkResult.objects.count() == rows
body = {"job": jobs[0].pk, "benchmark": "dgemm",
        "results": [{"node": f"hx{i:04d}", "seconds": 2.5 + i * 1e-4} for i in range(1, 2049)]}
start = time.perf_counter()
response = client.post("/api/v1/benchmarks/", json.dumps(body), content_type="application/json")
out["json http (2048 rows)"] = time.perf_counter() - start
assert response.status_code == 201, response.content[:500]
print(json.dumps(out))
"""


def run_once(database_url: str, rows: int) -> dict[str, float]:
    import json

    env = {**os.environ, "DATABASE_URL": database_url,
           "DJANGO_SETTINGS_MODULE": "hxportal.settings.test",
           "HX_DATA_DIR": tempfile.mkdtemp(prefix="hxbench-"),
           "HX_MAX_BODY_BYTES": str(64 * 1024 * 1024)}
    done = subprocess.run([sys.executable, "-c", CHILD, str(rows)], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"benchmark child failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432/hxbench")
    parser.add_argument("--rows", type=int, default=100_000)
    args = parser.parse_args()
    print(f"Ingesting {args.rows} benchmark rows (target < 10 s)")
    print(f"{'backend':<10} {'step':<22} {'seconds':>8} {'rows/s':>10}")
    for backend in ("sqlite", "postgres"):
        if backend == "sqlite":
            url = f"sqlite:///{tempfile.mkdtemp(prefix='hxbench-')}/bench.sqlite3"
        else:
            try:
                url = fresh_postgres(args.postgres, "hxbench_ingest")
            except Exception as exc:  # noqa: BLE001 - report and go on
                print(f"postgres   skipped: {exc}")
                continue
        for step, seconds in run_once(url, args.rows).items():
            count = 2048 if step.startswith("json") else args.rows
            print(f"{backend:<10} {step:<22} {seconds:>8.2f} {count / seconds:>10.0f}")


if __name__ == "__main__":
    main()
