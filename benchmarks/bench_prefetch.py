"""The cycle loop's prefetches, on and off, in one process.

The loop prefetches the records of the next port it will visit on machines
of at least ``loop.PREFETCH_MIN_VCS`` VCs (see ``loop._prefetch``).  Two
checkouts timed against each other on these noisy 2-core hosts differ by
5-10 % even when their code is the same (numba caches, code layout, the side
run first in a pair), which is as large as the effect; so this script times
the same code in the same process, with the prefetches forced on and forced
off in turn (``PREFETCH_MIN_VCS`` 0 or past every machine), and prints for each
machine the medians and the ratio pair by pair.  The runs are bit-identical
either way (``tests/simulation/engine/test_exact_refactor.py``), which the
script checks too (the same phit-hops and delivered packets).

Usage: python benchmarks/bench_prefetch.py [--machines 8x8c8,16x16c16,16x16x16c16]
       [--budget 20000000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

NEVER_VCS = 1 << 62


def _parse(machine: str) -> tuple[tuple[int, ...], int]:
    """``'16x16x16c16'`` -> ``((16, 16, 16), 16)``."""
    sides, _, conc = machine.partition("c")
    return tuple(int(s) for s in sides.split("x")), int(conc)


def cycles_for(machine: str, budget: int) -> int:
    """Cycles that give ``machine`` about ``budget`` endpoint-cycles (at least 200)."""
    sides, conc = _parse(machine)
    endpoints = conc
    for s in sides:
        endpoints *= s
    return max(200, budget // endpoints)


def _run(machine: str, cycles: int, prefetch: bool) -> tuple[float, int, int]:
    import numpy as np

    from simulation.engine import SimConfig, simulate
    from simulation.engine import loop as engine_loop

    engine_loop.PREFETCH_MIN_VCS = 0 if prefetch else NEVER_VCS
    sides, conc = _parse(machine)
    cfg = SimConfig(sides=sides, concentration=conc, routing="min", pattern="uniform", rate=0.5,
                    seed=1, max_cycles=cycles, warmup_cycles=cycles // 2)
    parts = [np.arange(cfg.endpoints)]
    t0 = time.process_time()
    res = simulate(cfg, parts)
    return time.process_time() - t0, res.phit_hops, res.packets_delivered


def ratio_line(machine: str, on: list[float], off: list[float]) -> str:
    """Speed with prefetching over speed without (CPU time off / on): median and pairs."""
    pairs = [b / a for a, b in zip(on, off, strict=True)]
    return (f"{machine}: prefetching on {statistics.median(on):.2f} s, off "
            f"{statistics.median(off):.2f} s CPU (medians of {len(on)}): "
            f"{statistics.median(pairs):.2f}x the speed (median of pairs); pairs "
            + ", ".join(f"{p:.2f}" for p in pairs))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--machines", default="8x8c8,16x16c16,16x16x16c16")
    ap.add_argument("--budget", type=int, default=20_000_000, help="endpoint-cycles per run")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    _run("4x4c4", 200, True)  # numba cache load
    _run("4x4c4", 200, False)
    for machine in args.machines.split(","):
        cycles = cycles_for(machine, args.budget)
        on: list[float] = []
        off: list[float] = []
        outcome = set()
        for i in range(args.repeat):  # alternate which side goes first
            for prefetch in ((True, False) if i % 2 == 0 else (False, True)):
                cpu, hops, delivered = _run(machine, cycles, prefetch)
                (on if prefetch else off).append(cpu)
                outcome.add((hops, delivered))
        if len(outcome) != 1:
            print(f"{machine}: runs differ with and without prefetching: {outcome}")
            return 1
        print(f"{machine} ({cycles} cycles) " + ratio_line(machine, on, off).split(": ", 1)[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
