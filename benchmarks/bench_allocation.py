"""Speed of the pure HyperX allocation core.

Run from the repository root::

    .venv/bin/python benchmarks/bench_allocation.py [--repeat 7] [--seed 0]

Prints two tables:

1. online allocation of 4,096 nodes on a 16x16x16 HyperX with c = 16
   (65,536 endpoints) at 50 % random endpoint occupancy: median of several
   runs after a warm-up, per policy; the first call (numba cache load or
   compilation) is printed separately, and so is the numba compile time of
   each kernel (on uncached copies);
   the same with 50 % of whole switches busy (as locality-aware jobs leave
   the machine);
2. properties and exact partition bandwidth (LP) time of each static
   partition of the 8x8, c = 8 machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from numba import njit

from allocation.hyperx import (
    POLICIES,
    HyperX,
    _kernels,
    allocate,
    exact_partition_bandwidth,
    partition_properties,
    static_partition,
)


def _median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def bench_compile() -> None:
    """Numba compile time of each kernel, measured on uncached copies (the
    package's own kernels use ``cache=True``, so a warm run only loads them)."""
    coords = HyperX((4, 4), 1).switch_coords()
    idx = np.arange(16, dtype=np.int64)
    member = np.ones(16, dtype=np.bool_)
    strides = np.array([4, 1], dtype=np.int64)
    take = np.ones(16, dtype=np.int64)
    cases = {
        "max_pair_distance": (coords,),
        "all_pairs_weakly_convex": (coords, idx, member, strides),
        "transversal_rounds": (coords, idx, take, 4, 4),
    }
    parts = []
    for name, args in cases.items():
        fresh = njit(cache=False)(getattr(_kernels, name).py_func)
        t = time.perf_counter()
        fresh(*args)
        parts.append(f"{name} {time.perf_counter() - t:.2f} s")
    print("Numba compile time (uncached): " + ", ".join(parts))
    print()


def bench_online(repeat: int, seed: int, granularity: str = "endpoint") -> None:
    hx = HyperX((16, 16, 16), 16)
    rng = np.random.default_rng(seed)
    if granularity == "endpoint":
        avail = rng.random(hx.n_endpoints) < 0.5
    else:  # whole switches busy, as left by locality-aware jobs
        avail = np.repeat(rng.random(hx.n_switches) < 0.5, hx.concentration)
    size = 4096
    print(f"Online allocation: {size} nodes on HyperX {hx.sides} c={hx.concentration}, "
          f"{int(avail.sum())}/{hx.n_endpoints} endpoints free "
          f"(50 % random {granularity} occupancy)")
    print(f"{'policy':<16} {'first call ms':>14} {'median ms':>10} {'switches':>9} "
          f"{'whole sw':>9}")
    for policy in POLICIES:
        t = time.perf_counter()
        got = allocate(hx, avail, policy, size, seed=seed)
        first = time.perf_counter() - t
        med = _median_time(lambda p=policy: allocate(hx, avail, p, size, seed=seed), repeat)
        sw, counts = np.unique(hx.switch_of(got), return_counts=True)
        whole = int((counts == hx.concentration).sum())
        print(f"{policy:<16} {first * 1e3:>14.2f} {med * 1e3:>10.2f} {sw.size:>9} {whole:>9}")
    print()


def bench_exact(repeat: int) -> None:
    hx = HyperX((8, 8), 8)
    print("Static partitions of the 8x8 c=8 machine (partition 0, seed 0): properties and "
          "exact PB LP time")
    cols = ("policy", "size", "sw", "avg_d", "max_d", "convexity", "local", "hull",
            "pb_bound", "pb_exact", "LP ms")
    print(f"{cols[0]:<16} {cols[1]:>4} {cols[2]:>3} {cols[3]:>7} {cols[4]:>5} {cols[5]:>13} "
          f"{cols[6]:>5} {cols[7]:>4} {cols[8]:>8} {cols[9]:>8} {cols[10]:>7}")
    for policy in POLICIES:
        part = static_partition(policy, 8, 0, seed=0)
        p = partition_properties(hx, part, exact=True)
        lp = _median_time(lambda part=part: exact_partition_bandwidth(hx, part), repeat)
        print(f"{policy:<16} {p.size:>4} {p.switches:>3} {p.avg_distance:>7.4f} "
              f"{p.max_distance:>5} {p.convexity:>13} {p.switch_locality!s:>5} "
              f"{p.hull_links:>4} {p.pb_bound:>8.4f} {p.pb_exact:>8.4f} {lp * 1e3:>7.1f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per case")
    parser.add_argument("--seed", type=int, default=0, help="occupancy / policy seed")
    args = parser.parse_args(argv)
    t = time.perf_counter()
    bench_compile()
    bench_online(args.repeat, args.seed)
    bench_online(args.repeat, args.seed, granularity="switch")
    bench_exact(max(1, args.repeat // 2))
    print(f"\ntotal {time.perf_counter() - t:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
