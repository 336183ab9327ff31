"""What-if replay speed: the issue's two targets and how the cost grows.

1. A 10,000-job synthetic log (Lublin & Feitelson) on the 8x8, c = 8 machine:
   every online policy x 3 spare rules (none, 2, recommended) x 2 seeds, run on
   2 processes (the work of one Celery task each: the pure core, without the
   database round trips; a process keeps its caches from one run to the next,
   as a worker's pool process does). Target: 60 s.
2. Growth: one scenario (diagonal, recommended spares) for 1,000 .. 10,000 jobs
   on 8x8, and for 2,000 jobs on machines of 64 .. 4,096 nodes; ratios against
   the smallest in this run.
3. ``--big``: a 100,000-job log on a 4,096-node machine (16x16, c = 16), one
   scenario per ``--big-policy``. Target: 10 minutes.

Usage: python benchmarks/bench_whatif.py [--processes 2] [--skip-study] [--big]
       [--big-policy diagonal ...] [--jobs 10000]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from multiprocessing import get_context
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from allocation.hyperx import ONLINE_POLICIES, HyperX
from whatif.replay import (
    ModelParameters,
    Scenario,
    SpareRule,
    fit_to_machine,
    run_one,
    synthetic_workload,
)
from whatif.replay.model import recommended_spares
from whatif.replay.placement import _hull_size

MODEL = ModelParameters(p_abn=0.005, alpha_abn=2.0, t_bench=30.0)
SPARES = ("none", "2", "recommended")


def _jobs(n_nodes: int, count: int, seed: int = 0):
    days = 20 + count / 25  # long enough for ``count`` jobs at load 1.5
    w = synthetic_workload(n_nodes, days=days, load=1.5, seed=seed, max_jobs=count)
    return fit_to_machine(w.jobs, n_nodes)[0]


_STATE: dict = {}


def _init(sides, c, count):
    _STATE["hx"] = HyperX(tuple(sides), c)
    _STATE["jobs"] = _jobs(_STATE["hx"].n_endpoints, count)


def _task(args):
    policy, spares, seed = args
    t, cpu = time.perf_counter(), time.process_time()
    run_one(_STATE["jobs"], _STATE["hx"], Scenario(policy, SpareRule.parse(spares)), MODEL, seed)
    return policy, spares, seed, time.perf_counter() - t, time.process_time() - cpu


def study(processes: int, count: int) -> None:
    tasks = [(p, s, z) for p in ONLINE_POLICIES for s in SPARES for z in (0, 1)]
    started = time.perf_counter()
    with get_context("fork").Pool(processes, initializer=_init,
                                  initargs=((8, 8), 8, count)) as pool:
        walls = list(pool.imap_unordered(_task, tasks))
    total = time.perf_counter() - started
    per_policy: dict[str, float] = {}
    for policy, _, _, _, cpu in walls:
        per_policy[policy] = per_policy.get(policy, 0.0) + cpu
    cpu_total = sum(c for *_, c in walls)
    print(f"study: {count:,} jobs on 8x8 c=8, {len(tasks)} runs "
          f"({len(ONLINE_POLICIES)} policies x {len(SPARES)} spare rules x 2 seeds) on "
          f"{processes} processes: {total:.1f} s wall (target 60 s), "
          f"{sum(w for *_, w, _ in walls) / len(walls):.2f} s wall mean per run; "
          f"{cpu_total:.1f} CPU s in all, so {cpu_total / processes:.1f} s on "
          f"{processes} idle cores")
    for policy, cpu in sorted(per_policy.items(), key=lambda kv: -kv[1]):
        print(f"  {policy:24} {cpu / (len(SPARES) * 2):6.2f} CPU s per run")


def _cold() -> None:
    """Empty the per-process caches (spare recommendations, hulls) so that each
    growth row pays for its own."""
    recommended_spares.cache_clear()
    _hull_size.cache_clear()


def one(sides, c, count, policy="diagonal", spares="recommended") -> tuple[float, int]:
    hx = HyperX(tuple(sides), c)
    jobs = _jobs(hx.n_endpoints, count)
    _cold()
    t = time.perf_counter()
    run_one(jobs, hx, Scenario(policy, SpareRule.parse(spares)), MODEL, 0)
    return time.perf_counter() - t, len(jobs)


def growth() -> None:
    one((4, 4), 4, 200)  # compile the allocators' kernels before timing anything
    print("growth in jobs (8x8 c=8, diagonal, recommended spares; caches cold per row):")
    base = None
    for count in (1000, 2000, 5000, 10000):
        wall, n = one((8, 8), 8, count)
        base = base or wall / n
        print(f"  {n:>7,} jobs {wall:7.2f} s  {wall / n * 1e3:6.3f} ms/job  "
              f"x{wall / n / base:5.2f} per job vs 1,000")
    print("growth in machine size (2,000 jobs, diagonal, recommended spares; caches cold):")
    base = None
    for sides, c in (((4, 4), 4), ((8, 8), 8), ((16, 16), 8), ((16, 16), 16)):
        wall, n = one(sides, c, 2000)
        nodes = sides[0] * sides[1] * c
        base = base or wall
        print(f"  {nodes:>5,} nodes ({sides[0]}x{sides[1]} c={c}) {n:,} jobs {wall:7.2f} s  "
              f"x{wall / base:5.2f} vs 64 nodes")


def big(policies, count) -> None:
    for policy in policies:
        wall, n = one((16, 16), 16, count, policy=policy)
        print(f"big: {n:,} jobs on 4,096 nodes (16x16 c=16), {policy}, recommended spares: "
              f"{wall:.1f} s (target 600 s)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--skip-study", action="store_true")
    parser.add_argument("--skip-growth", action="store_true")
    parser.add_argument("--big", action="store_true")
    parser.add_argument("--big-jobs", type=int, default=100_000)
    parser.add_argument("--big-policy", action="append", default=None)
    args = parser.parse_args()
    print(f"CPUs: {os.cpu_count()} (load average {os.getloadavg()[0]:.1f}: shared machine "
          "figures vary)")
    if not args.skip_study:
        study(args.processes, args.jobs)
    if not args.skip_growth:
        growth()
    if args.big:
        big(args.big_policy or ["diagonal"], args.big_jobs)


if __name__ == "__main__":
    main()
