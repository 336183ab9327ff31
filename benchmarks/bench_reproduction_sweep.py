"""The reproduction sweep through the portal: what a seed of each part costs a worker.

Why: the two ordering parts take up to 32 seeds (``ordering_seeds``) because their
runs are short, about a sixtieth of a Table 4 run in the engine; through the portal
each run also pays for its task, its row lock and its result's write, which weigh
more on a short run. This starts the reproduction sweep through the service
(``simulation.services.start_reproduction``) against PostgreSQL and Redis, lets a
real prefork worker run it, and prints per part: the runs, the wall time from the
part's first start to its last finish, the worker seconds per run (finished -
started) and the engine seconds per run (the runs' own ``wall_seconds``); then, for a
random sample of each part's points (the same in every invocation), their worker
seconds beside the same points simulated in this process (the baseline, measured in
the same invocation) and the ratio of the two.

Usage: python benchmarks/bench_reproduction_sweep.py [--seeds 1] [--ordering-seeds 32]
       [--processes 2] [--baseline-runs 20]
       [--database-url postgres://postgres@127.0.0.1:5432/postgres]
       [--broker redis://127.0.0.1:6379/13]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

from _workers import add_service_arguments, portal_environment, start_worker, stop_worker

PARTS = ("table4", "escalation_min", "interference_static")


def _key(point: dict) -> str:
    return json.dumps(point, sort_keys=True)


def part_summary(rows: list[tuple[dict, datetime, datetime, float]],
                 baseline: dict[str, float] | None = None) -> dict[str, dict]:
    """Per part, from ``(point, started, finished, engine seconds)`` per finished run:
    runs, wall from the first start to the last finish, worker and engine seconds per
    run; with ``baseline`` (in-process seconds by point key), the worker seconds per
    run of those same points and their in-process seconds (paired)."""
    baseline = baseline or {}
    by_part: dict[str, list] = defaultdict(list)
    for point, started, finished, engine in rows:
        by_part[point["part"]].append((_key(point), started, finished, engine))
    out = {}
    for part, runs in by_part.items():
        n = len(runs)
        paired = [((f - s).total_seconds(), baseline[k]) for k, s, f, _ in runs if k in baseline]
        out[part] = {"runs": n,
                     "wall": (max(r[2] for r in runs) - min(r[1] for r in runs))
                     .total_seconds(),
                     "worker_per_run": sum((f - s).total_seconds() for _, s, f, _ in runs) / n,
                     "engine_per_run": sum(e for *_, e in runs) / n,
                     "paired": len(paired),
                     "paired_worker": sum(w for w, _ in paired) / len(paired) if paired else None,
                     "paired_in_process": sum(b for _, b in paired) / len(paired)
                     if paired else None}
    return out


def _in_process(items: list[tuple[dict, dict]], per_part: int) -> dict[str, float]:
    """Seconds of a random sample of each part's runs (the same for every invocation),
    simulated here, by point key."""
    from simulation import services

    out = {}
    for part in PARTS:
        runs = [(point, config) for point, config in items if point["part"] == part]
        for point, config in random.Random(0).sample(runs, min(per_part, len(runs))):
            start = time.perf_counter()
            services.simulate_inline(config)
            out[_key(point)] = time.perf_counter() - start
    return out


def _sweep_round(seeds: int, ordering_seeds: int, processes: int, env: dict[str, str],
                 log: Path) -> tuple[float, list[tuple[dict, datetime, datetime, float]], int]:
    """Start the sweep, let a worker of ``processes`` run it; its wall time, its runs'
    ``(point, started, finished, engine seconds)`` and how many did not succeed."""
    from hxportal.celery import app
    from hxportal.models import TERMINAL_RUN_STATUSES
    from simulation import services
    from simulation.models import SimulationRun

    app.control.purge()
    sweep = services.start_reproduction(seeds=seeds, ordering_seeds=ordering_seeds)
    proc = start_worker(processes, env, log)
    start = time.monotonic()
    try:
        while sweep.runs.exclude(status__in=TERMINAL_RUN_STATUSES).exists():
            time.sleep(1.0)
        wall = time.monotonic() - start
    finally:
        stop_worker(proc)
    runs = SimulationRun.objects.filter(sweep=sweep)
    rows = [(parameters["point"], started, finished, (result or {})["wall_seconds"])
            for parameters, started, finished, result in runs.filter(status="succeeded")
            .values_list("parameters", "started_at", "finished_at", "result")]
    return wall, rows, runs.exclude(status="succeeded").count()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--ordering-seeds", type=int, default=32)
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--baseline-runs", type=int, default=20,
                    help="runs of each part simulated in this process")
    add_service_arguments(ap)
    args = ap.parse_args()

    env, data_dir = portal_environment(args, "hxbench_reproduction")
    from simulation import reproduction_preset

    items = reproduction_preset.reproduction_configs(args.seeds, args.ordering_seeds)
    print(f"reproduction sweep: {args.seeds} seed{'s' if args.seeds != 1 else ''}, the "
          f"orderings on {args.ordering_seeds}: "
          f"{len(items)} runs; PostgreSQL + Redis, a prefork worker of {args.processes}",
          flush=True)
    wall, rows, failed = _sweep_round(args.seeds, args.ordering_seeds, args.processes, env,
                                      data_dir / "worker.log")
    parts = part_summary(rows, _in_process(items, args.baseline_runs))
    print(f"whole sweep: {wall:.1f} s wall, {failed} runs not succeeded")
    _print(parts)


def _print(parts: dict[str, dict[str, Any]]) -> None:
    print(f"{'part':<20} {'runs':>5} {'wall s':>7} {'worker s/run':>12} {'engine s/run':>12}"
          f" | {'sample':>6} {'worker s/run':>12} {'in-process':>10} {'ratio':>6}")
    for part in PARTS:
        row = parts.get(part)
        if row is None:
            continue
        paired = (f"{row['paired']:>6} {row['paired_worker']:>12.3f} "
                  f"{row['paired_in_process']:>10.3f} "
                  f"{row['paired_worker'] / row['paired_in_process']:>5.2f}x"
                  if row["paired"] else f"{0:>6}")
        print(f"{part:<20} {row['runs']:>5} {row['wall']:>7.1f} {row['worker_per_run']:>12.3f} "
              f"{row['engine_per_run']:>12.3f} | {paired}", flush=True)


if __name__ == "__main__":
    main()
