"""Server time of the machine page on a 16x16x16, c = 16 machine (65,536 nodes).

Usage: .venv/bin/python benchmarks/bench_machine_page.py [--repeat N]
A fresh SQLite database; the machine holds a 2,048-node job with 64 spares and
three drained nodes inside it. The page draws one plane (16x16 switches, 4,096
node cells); the figures are the wall time of the whole request through Django's
test client (views, queries, template), best and median of N, per plane asked for.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = r"""
import statistics, sys, time, django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from django.test import Client
from django.test.utils import setup_test_environment
setup_test_environment()
from allocation.services import jobs, machines
from hxportal import services as accounts
repeat = int(sys.argv[1])
start = time.perf_counter()
machine = machines.create_machine(name="big", sides=[16, 16, 16], concentration=16)
created = time.perf_counter() - start
owner, _ = accounts.upsert_user("bench", "operator")
job = jobs.submit_job(owner=owner, machine=machine, name="wide", node_count=2048,
                      pattern="uniform", policy="row", spares=64)
names = list(job.allocations.order_by("rank").values_list("node__hostname", flat=True)[:3])
machines.set_node_state(machine, ",".join(names), "drained", "burn-in")
client = Client()
client.force_login(owner)
client.get("/machines/big/")
print(f"machine created in {created:.1f} s")
for plane in (0, 7, 15):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        response = client.get(f"/machines/big/?plane={plane}")
        times.append(time.perf_counter() - t)
        assert response.status_code == 200
    cells = response.content.count(b'data-hostname=')
    print(f"plane {plane:2d}: best {min(times) * 1000:6.1f} ms, median "
          f"{statistics.median(times) * 1000:6.1f} ms, {cells} node cells, "
          f"{len(response.content) / 1e6:.2f} MB")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    data = tempfile.mkdtemp(prefix="hxbench-")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "hxportal.settings.local",
           "HX_DATA_DIR": data, "DATABASE_URL": f"sqlite:///{data}/bench.sqlite3"}
    print("machine page, 16x16x16 switches, c = 16 (65,536 nodes), SQLite")
    subprocess.run([sys.executable, "-c", CHILD, str(args.repeat)], cwd=ROOT, env=env,
                   check=True)


if __name__ == "__main__":
    main()
