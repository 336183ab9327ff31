"""Time creating a 16x16x16, c = 16 machine (65,536 nodes) on SQLite and PostgreSQL.

Usage: .venv/bin/python benchmarks/bench_machine_create.py [--postgres URL] [--repeat N]
Each backend gets a fresh database; the figure is the wall time of
``machines.create_machine`` (validation, hostnames, one transaction), plus the
8x8 reference machine as a small baseline measured in the same run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _databases import fresh_postgres

ROOT = Path(__file__).resolve().parents[1]
CHILD = r"""
import os, sys, time, django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from allocation.services import machines
from allocation.models import Machine
sides = [int(s) for s in sys.argv[1].split(",")]
c = int(sys.argv[2])
start = time.perf_counter()
machine = machines.create_machine(name="bench", sides=sides, concentration=c)
elapsed = time.perf_counter() - start
assert machine.nodes.count() == machine.node_count
print(f"{elapsed:.4f} {machine.node_count}")
"""


def run_once(database_url: str, sides: str, c: int) -> tuple[float, int]:
    env = {**os.environ, "DATABASE_URL": database_url,
           "DJANGO_SETTINGS_MODULE": "hxportal.settings.local",
           "HX_DATA_DIR": tempfile.mkdtemp(prefix="hxbench-")}
    out = subprocess.run([sys.executable, "-c", CHILD, sides, str(c)], cwd=ROOT, env=env,
                         capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), int(out[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432/hxbench")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'backend':<10} {'machine':<18} {'nodes':>7} {'median s':>9} {'nodes/s':>10}")
    for backend in ("sqlite", "postgres"):
        for sides, c in (("8,8", 8), ("16,16,16", 16)):
            times = []
            for i in range(args.repeat):
                if backend == "sqlite":
                    url = f"sqlite:///{tempfile.mkdtemp(prefix='hxbench-')}/bench.sqlite3"
                else:
                    try:
                        url = fresh_postgres(args.postgres, f"hxbench_{i}")
                    except Exception as exc:  # noqa: BLE001 - report and go on
                        print(f"postgres   skipped: {exc}")
                        break
                seconds, nodes = run_once(url, sides, c)
                times.append(seconds)
            if times:
                median = statistics.median(times)
                label = sides.replace(",", "x") + f", c={c}"
                print(f"{backend:<10} {label:<18} {nodes:>7} {median:>9.3f} "
                      f"{nodes / median:>10.0f}")


if __name__ == "__main__":
    start = time.perf_counter()
    main()
