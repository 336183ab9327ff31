"""Time /metrics and beat's health snapshot on a loaded fleet, on SQLite and PostgreSQL.

Usage: .venv/bin/python benchmarks/bench_metrics.py [--postgres URL] [--rounds N]
Each backend gets a fresh database with two machines (16x16, c = 16: 4,096 nodes;
8x8, c = 8: 512 nodes), N fleet-wide benchmark rounds of every node (default 10:
46,080 results in the 30-day window), 200 jobs holding 3,200 nodes, 1,000 answered
recommendations and a Slurm link per machine. Figures (median of 5):

* ``snapshot``: beat's ``refresh_health_snapshots`` (the drain rule over every node);
* ``scrape``: ``GET /metrics`` with a token through Django's test client (the Celery
  broker is the filesystem one: reading it is a directory listing);
* ``machines``: ``GET /api/v1/machines/`` in the same run, the baseline; the ratio
  says what a scrape costs against the cheapest API read.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _databases import fresh_postgres

ROOT = Path(__file__).resolve().parents[1]
CHILD = r"""
import json, statistics, sys, time, django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from datetime import timedelta
import numpy as np
from django.db import connection
from django.test import Client
from django.utils import timezone
from allocation.models import SlurmLink
from allocation.services import jobs, machines
from health import services as health
from hxportal import services as accounts
from metrics import services
from recommendations.models import Recommendation
rounds = int(sys.argv[1])
big = machines.create_machine(name="big", sides=[16, 16], concentration=16)
small = machines.create_machine(name="small", sides=[8, 8], concentration=8)
user, _ = accounts.upsert_user("bench", "operator", password="pw-bench-12345")
rng = np.random.default_rng(0)
for machine in (big, small):
    hosts = list(machine.nodes.order_by("index").values_list("hostname", flat=True))
    slow = set(hosts[::97])
    for r in range(rounds):
        noise = np.exp(0.003 * rng.standard_normal(len(hosts)))
        health.ingest_payload({"machine": machine.name, "benchmark": "stream", "results": [
            {"node": h, "seconds": float((1.3 if h in slow else 1.0) * noise[i])}
            for i, h in enumerate(hosts)]}, user=user)
    SlurmLink.objects.create(machine=machine, enabled=True, last_success_at=timezone.now(),
                             syncs_total=100)
for i in range(200):
    jobs.submit_job(owner=user, machine=big, name=f"j{i}", node_count=16, pattern="uniform",
                    policy="row")
now = timezone.now()
Recommendation.objects.bulk_create(Recommendation(
    machine=big, user=user, node_count=16, pattern="uniform", cache_key=str(i),
    status="accepted" if i % 3 else "ready", deadline=now,
    created_at=now - timedelta(seconds=100 + i), finished_at=now - timedelta(seconds=i % 40))
    for i in range(1000))
with connection.cursor() as cursor:  # fresh tables: plan with statistics, as autovacuum would
    cursor.execute("ANALYZE")
key = accounts.issue_token(user, "bench")
client = Client(HTTP_AUTHORIZATION=f"Token {key}", HTTP_HOST="localhost")

def median_of(fn, n=5):
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)

def get(url):
    response = client.get(url)
    assert response.status_code == 200, response.content[:300]

get("/metrics")
get("/api/v1/machines/")
out = {"snapshot": median_of(services.refresh_health_snapshots),
       "scrape": median_of(lambda: get("/metrics")),
       "machines": median_of(lambda: get("/api/v1/machines/"))}
text = client.get("/metrics").content.decode()
out["candidates"] = sum(float(line.split()[-1]) for line in text.splitlines()
                        if line.startswith("hx_drain_candidates{"))
out["bytes"] = len(text)
print(json.dumps(out))
"""


def run_once(database_url: str, rounds: int) -> dict[str, float]:
    env = {**os.environ, "DATABASE_URL": database_url,
           "DJANGO_SETTINGS_MODULE": "hxportal.settings.test",
           "HX_DATA_DIR": tempfile.mkdtemp(prefix="hxbench-"),
           "CELERY_BROKER_URL": "filesystem://"}
    done = subprocess.run([sys.executable, "-c", CHILD, str(rounds)], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"benchmark child failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432/hxbench")
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    print(f"/metrics on 4,608 nodes, {args.rounds} health rounds, 1,000 recommendations")
    print(f"{'backend':<10} {'snapshot s':>10} {'scrape s':>9} {'machines s':>10} "
          f"{'scrape/machines':>16} {'candidates':>10} {'bytes':>7}")
    for backend in ("sqlite", "postgres"):
        if backend == "sqlite":
            url = f"sqlite:///{tempfile.mkdtemp(prefix='hxbench-')}/bench.sqlite3"
        else:
            try:
                url = fresh_postgres(args.postgres, "hxbench_metrics")
            except Exception as exc:  # noqa: BLE001 - report and go on
                print(f"postgres   skipped: {exc}")
                continue
        r = run_once(url, args.rounds)
        print(f"{backend:<10} {r['snapshot']:>10.3f} {r['scrape']:>9.3f} {r['machines']:>10.3f} "
              f"{r['scrape'] / r['machines']:>16.1f} {r['candidates']:>10.0f} "
              f"{r['bytes']:>7.0f}")


if __name__ == "__main__":
    main()
