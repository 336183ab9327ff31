"""How many packets a large machine's calibration point holds in flight, against
the packet pool it has and the bound its memory estimate assumes.

The memory estimate's upper bound (``estimate_memory(...).total``) counts the
packet pool at the size every buffer full of packets would need; the portal checks
the floor (the pool at its first size) before a run and the pool's growth while
it runs. This shows what runs really hold: it simulates one calibration point of
the 16 x 16 x 16, c = 16 machine (65,536 nodes; the portal's own configuration
and synthetic occupancy) for ``--cycles`` cycles and prints, every 256 cycles,
the packets in flight, the pool's size, the peak resident memory of this
process and the share of the job's packets delivered, and each growth of the
pool (within its reservation, which ``--limit-mib`` cuts to what the portal's
``HX_SIM_MAX_BYTES`` leaves room for; without it the run is unlimited, as on the
CLI). It wraps two private functions
of ``simulation.engine.simulator`` (the loop call and the pool's growth) to read
the loop's counters; the run itself is unchanged.

With ``--keep`` a completed run's record goes to ``docs/evidence/long_runs.json``,
where ``bench_calibration_cost.py`` prices the calibration with its measured cycles.

Usage: .venv/bin/python benchmarks/pool_growth.py [--pattern all2all] [--size 1024]
       [--load 0.5] [--policy row] [--cycles 4000] [--limit-mib 1024] [--keep]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _calibration_runs import keep_long_run, setup_django


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _delivered(traffic, ranks) -> float:
    """The share of the job's packets delivered so far (its apps of known size: the
    background's never end), which dates a run's end before it gets there."""
    finite = traffic.app_total > 0
    return float(ranks["app_stats"][finite, 2].sum()) / max(int(traffic.app_total[finite].sum()), 1)


def _record(args: argparse.Namespace, shape, result, ranks: int, held: int, wall: float,
            cpu: float, load: float) -> dict:
    """The run as ``_calibration_runs.run_task`` records a calibration point (its seconds
    include the traffic tables' building, as there), with the command that made it."""
    app = result.apps[0]
    return {"label": ["point", args.pattern, args.size, args.load, args.policy, 0],
            "nodes": shape.node_count, "completed": True,
            "completion_cycles": app.completion_cycles, "cycles": result.cycles,
            "wall_seconds": round(wall, 1), "cpu_seconds": round(cpu, 1),
            "busy_endpoints": ranks + (held if held >= 2 else 0), "ranks": ranks,
            "max_cycles": args.cycles, "load_average": round(load, 2),
            "engine_version": result.engine_version, "max_rss_mib": round(_rss_mib()),
            "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "command": "benchmarks/pool_growth.py " + " ".join(sys.argv[1:])}


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pattern", default="all2all")
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--load", type=float, default=0.5)
    parser.add_argument("--policy", default="row")
    parser.add_argument("--cycles", type=int, default=4000)
    parser.add_argument("--limit-mib", type=int, default=None,
                        help="the memory limit per run, MiB (default: none)")
    parser.add_argument("--keep", action="store_true",
                        help="keep a completed run's record in docs/evidence/long_runs.json, "
                             "where bench_calibration_cost.py reads it")
    return parser.parse_args()


def main() -> None:
    args = _arguments()
    limit = None if args.limit_mib is None else args.limit_mib * 2**20
    setup_django()
    import numpy as np

    from allocation.hyperx import MachineShape
    from recommendations.calibration.grid import (
        CalibrationPoint,
        point_partitions,
        synthetic_occupancy,
    )
    from recommendations.services.predictions import prediction_settings
    from simulation.engine import loop as L
    from simulation.engine import simulate
    from simulation.engine import simulator as engine
    from simulation.engine.memory import (
        MemoryLimitReached,
        estimate_memory,
        format_bytes,
        pool_reservation,
    )
    from simulation.services.configs import parse_config

    shape = MachineShape((16, 16, 16), 16)
    started, cpu, load = time.time(), time.process_time(), os.getloadavg()[0]
    held = synthetic_occupancy(shape, args.load)
    cfg = parse_config(prediction_settings(list(shape.sides), shape.concentration,
                                           args.pattern, args.size, args.policy,
                                           background=held.size >= 2, seed=0))
    est = estimate_memory(cfg)
    print(f"# {shape.node_count} nodes, {args.pattern} of {args.size} at {args.load:.0%} load, "
          f"{args.policy}, seed 0, {args.cycles} of {cfg.max_cycles} cycles")
    print(f"# estimate: at least {format_bytes(est.floor)} (the pool's first size), at most "
          f"{format_bytes(est.total)} (the pool at {format_bytes(est.pool.bytes)}: every "
          "buffer full)")
    print(f"# the pool reserves {pool_reservation(est, limit):,} records "
          f"({'no limit' if limit is None else 'within ' + format_bytes(limit)})")
    point = CalibrationPoint(args.pattern, args.size, args.load, args.policy, 0)
    parts = point_partitions(shape, point, cfg.ranks, held)
    call_loop, grow = engine._call_loop, engine._grow
    reported, most = [0], [0]

    def growing(pool, estimate, cycle, limit):
        before = pool["pk"].shape[0]
        grow(pool, estimate, cycle, limit)
        print(f"  the pool grows at cycle {cycle}: {before:,} -> {pool['pk'].shape[0]:,} "
              f"records, {int(pool['st'][L.S_IN_NET]):,} packets in flight")

    def calling(t, t1, cf, prm, net, tr, pool, state, ranks):
        status = call_loop(t, t1, cf, prm, net, tr, pool, state, ranks)
        st = pool["st"]
        most[0] = max(most[0], int(st[L.S_IN_NET]))
        if int(st[L.S_CYCLE]) - reported[0] >= 256:
            reported[0] = int(st[L.S_CYCLE])
            print(f"  cycle {reported[0]:>6}: {int(st[L.S_IN_NET]):>9,} packets in flight, "
                  f"pool {pool['pk'].shape[0]:>9,}, peak {_rss_mib():.0f} MiB resident, "
                  f"{time.time() - started:.0f} s, {_delivered(tr, ranks):.1%} of the "
                  "job's packets delivered", flush=True)
        return status

    engine._call_loop, engine._grow = calling, growing
    base = _rss_mib()
    try:
        result = simulate(dataclasses.replace(cfg, max_cycles=args.cycles),
                          [np.asarray(p) for p in parts], memory_limit=limit)
    except MemoryLimitReached as stopped:
        print(f"# MemoryLimitReached: {stopped}")
    else:
        print(f"# {result.cycles} cycles ({'completed' if result.completed else 'cut'}) in "
              f"{time.time() - started:.0f} s")
        if args.keep and result.completed:
            keep_long_run(_record(args, shape, result, cfg.ranks, held.size, time.time() - started,
                                  time.process_time() - cpu, load))
            print("# kept in docs/evidence/long_runs.json")
    print(f"# at most {most[0]:,} packets in flight (at the ends of the loop's calls); peak "
          f"{_rss_mib():.0f} MiB resident, {base:.0f} MiB before the run")


if __name__ == "__main__":
    main()
