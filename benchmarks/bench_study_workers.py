"""The study preset at the study's volume on 1 and on 2 Celery worker processes.

A real worker (``celery -A hxportal worker --concurrency=P``) runs an evenly
spaced sample of the study preset's runs (``simulation.presets.study_configs``,
all kernels, policies and sizes in proportion), created through the service
like any run, against PostgreSQL and Redis. For each P it prints the wall time
from the worker's start to the last finished run, the engine time the runs
report, the speed-up over P = 1 measured in the same invocation, and the full
preset's wall time extrapolated from the sample (runs x mean wall per run).

Usage: python benchmarks/bench_study_workers.py [--runs 40] [--processes 1,2]
       [--database-url postgres://postgres@127.0.0.1:5432/postgres]
       [--broker redis://127.0.0.1:6379/13]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from _workers import add_service_arguments, portal_environment, start_worker, stop_worker


def _sample(runs: int) -> tuple[list[dict], int]:
    from simulation import presets

    items = presets.study_configs(scale=1)
    step = len(items) / runs
    return [items[int(i * step)][1] for i in range(runs)], len(items)


def _round(processes: int, configs: list[dict], env: dict[str, str], log: Path) -> dict:
    """Create the sample's runs, let a P-process worker run them, time it."""
    from hxportal.celery import app
    from hxportal.models import TERMINAL_RUN_STATUSES
    from simulation import services
    from simulation.models import SimulationRun

    SimulationRun.objects.all().delete()  # no stored result to reuse between rounds
    app.control.purge()
    ids = [services.start_run(config).pk for config in configs]
    proc = start_worker(processes, env, log)
    start = time.monotonic()
    try:
        while SimulationRun.objects.filter(pk__in=ids).exclude(
                status__in=TERMINAL_RUN_STATUSES).exists():
            time.sleep(0.5)
        wall = time.monotonic() - start
    finally:
        stop_worker(proc)
    rows = list(SimulationRun.objects.filter(pk__in=ids).values_list("status", "result"))
    engine = sum((result or {}).get("wall_seconds", 0.0) for _, result in rows)
    failed = sum(status != "succeeded" for status, _ in rows)
    return {"processes": processes, "wall": wall, "engine": engine, "failed": failed}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--processes", default="1,2")
    add_service_arguments(ap)
    args = ap.parse_args()

    env, data_dir = portal_environment(args, "hxbench_study")
    configs, study_runs = _sample(args.runs)
    print(f"study preset: {study_runs} runs at the study's volume; sample of {len(configs)}, "
          f"evenly spaced; PostgreSQL + Redis, prefork worker")
    print(f"{'processes':>9} {'wall s':>8} {'engine s':>9} {'s/run':>6} {'speed-up':>9} "
          f"{'failed':>6}  full preset (extrapolated)", flush=True)
    rows = []
    for processes in (int(p) for p in args.processes.split(",")):
        rows.append(_round(processes, configs, env, data_dir / f"worker-{processes}.log"))
        _print(rows[-1], rows, len(configs), study_runs)


def _print(row: dict, rows: list[dict], runs: int, study_runs: int) -> None:
    """One line per worker size; the speed-up is over the one-process round."""
    one = next((r["wall"] for r in rows if r["processes"] == 1), None)
    speedup = f"{one / row['wall']:>8.2f}x" if one else f"{'-':>9}"
    per_run = row["wall"] / runs
    print(f"{row['processes']:>9} {row['wall']:>8.1f} {row['engine']:>9.1f} {per_run:>6.2f} "
          f"{speedup} {row['failed']:>6}  {per_run * study_runs / 60:.0f} min", flush=True)

if __name__ == "__main__":
    main()
