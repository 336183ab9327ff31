"""Speed of the packet-level simulator (simulation.engine).

Prints, for the reference configuration (8 x 8 HyperX, c = 8, 4 VCs, 16-phit
packets, uniform traffic at 0.5 phits/cycle/endpoint, MIN routing), the
compile (first call) time and then cycles per second and phit-hops per
second; then the same for a 16 x 16 x 16, c = 16 machine (65,536 endpoints)
over a short run, with the peak resident memory.

Usage: python benchmarks/bench_simulation.py [--big-cycles N] [--no-big]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from simulation.engine import SimConfig, simulate


def _run(cfg: SimConfig) -> tuple[tuple[float, float], object]:
    parts = [np.arange(cfg.endpoints)]
    t0, c0 = time.perf_counter(), time.process_time()
    res = simulate(cfg, parts)
    return (time.perf_counter() - t0, time.process_time() - c0), res


def _line(name: str, secs: tuple[float, float], res: object) -> None:
    wall, cpu = secs
    print(
        f"{name}: {res.cycles} cycles in {wall:.2f} s wall ({cpu:.2f} s CPU) -> "
        f"{res.cycles / wall:,.0f} cycles/s ({res.cycles / cpu:,.0f} per CPU second), "
        f"{res.phit_hops / wall:,.0f} phit-hops/s; accepted {res.throughput:.3f} "
        f"phits/cycle/endpoint, mean latency {res.latency_mean:.1f} cycles"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cycles", type=int, default=50_000)
    ap.add_argument("--big-cycles", type=int, default=1000)
    ap.add_argument("--no-big", action="store_true")
    args = ap.parse_args()

    ref = dict(sides=(8, 8), concentration=8, ranks=512, routing="min", pattern="uniform",
               rate=0.5, seed=1)
    (wall, _), _ = _run(SimConfig(**ref, max_cycles=200))
    print(f"first call (numba compile or cache load + 200 cycles): {wall:.2f} s")
    secs, res = _run(SimConfig(**ref, max_cycles=args.cycles, warmup_cycles=args.cycles // 5))
    _line("reference 8x8 c=8 uniform 0.5 min", secs, res)
    secs, res = _run(SimConfig(**dict(ref, rate=1.0), max_cycles=args.cycles // 5,
                               warmup_cycles=args.cycles // 25))
    _line("reference at saturation (rate 1.0)", secs, res)
    if not args.no_big:
        big = SimConfig(sides=(16, 16, 16), concentration=16, ranks=65_536, routing="min",
                        vcs=4, pattern="uniform", rate=0.5, seed=1,
                        max_cycles=args.big_cycles, warmup_cycles=args.big_cycles // 2)
        secs, res = _run(big)
        _line("16x16x16 c=16 uniform 0.5 min", secs, res)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS: {rss:,.0f} MiB")


if __name__ == "__main__":
    main()
