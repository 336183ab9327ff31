"""How far apart must two policies be before a live answer can tell them apart?

A live prediction ranks the policies by their mean completion cycles over the
engine seeds ``HX_PREDICTION_SEEDS`` (two by default). The seed draws the other jobs' permutation
traffic, and on a large machine that alone can move one placement's time by a
third. This script reruns chosen policies of ``calibration_agreement.py``'s live
cases (the same live machine, candidates and cache) at more seeds and prints, per
case, each policy's cycles per seed, their mean with a 95 % interval, for each
pair (with the fastest, when there are more than three policies) the paired
difference (the same seed gives every policy the same background permutation, so
the pair shares its noise) with its interval: a pair whose interval holds zero
cannot be ordered by that many seeds; and what the portal's two seeds alone would
have picked, and what that pick costs on the mean of all seeds.

Usage: .venv/bin/python benchmarks/live_seed_noise.py --cases 1024@0.5
       --policies random_endpoint,full_spread --seeds 0-5 [--shape 16] [--processes 2]
       [--pattern all2all] [--no-run]
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
from multiprocessing import Pool
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _calibration_runs import (
    cached,
    default_cache_dir,
    live_occupancy,
    live_tasks,
    run_task,
    setup_django,
    shape_label,
)
from calibration_agreement import LIVE_SEED, SHAPE_8, SHAPE_16

from allocation.hyperx import ONLINE_POLICIES


def seed_list(spec: str) -> tuple[int, ...]:
    """``0-5`` or ``0,1,4``."""
    if "-" in spec:
        low, high = (int(x) for x in spec.split("-"))
        return tuple(range(low, high + 1))
    return tuple(int(x) for x in spec.split(","))


def interval(values: np.ndarray) -> tuple[float, float]:
    """Mean and the half-width of its two-sided 95 % Student interval."""
    from scipy.stats import t

    mean = float(values.mean())
    if values.size < 2:
        return mean, float("nan")
    return mean, float(t.ppf(0.975, values.size - 1) * values.std(ddof=1)
                        / np.sqrt(values.size))


def two_seed_verdict(cycles: dict[str, dict[int, int]]) -> tuple[str, str, float] | None:
    """(the fastest on the first two seeds' mean, on every seed's, the first one's time over
    the second's - 1 on every seed), or None without two seeds for every policy."""
    if not cycles or min(len(c) for c in cycles.values()) < 2:
        return None
    first = {p: np.mean([c[s] for s in sorted(c)[:2]]) for p, c in cycles.items()}
    every = {p: np.mean(list(c.values())) for p, c in cycles.items()}
    two, best = min(first, key=first.get), min(every, key=every.get)
    return two, best, float(every[two] / every[best] - 1)


def report(label: str, cycles: dict[str, dict[int, int]]) -> None:
    print(f"\n{label}")
    for policy, per_seed in sorted(cycles.items(), key=lambda kv: np.mean(list(kv[1].values()))):
        values = np.array(list(per_seed.values()), dtype=float)
        mean, half = interval(values)
        first_two = [per_seed[s] for s in sorted(per_seed)[:2]]
        print(f"  {policy:22s} mean {mean:8.0f} +- {half:6.0f} ({half / mean:5.1%})  "
              f"seeds {len(values)}: " + ", ".join(f"{s}:{c}" for s, c in sorted(per_seed.items()))
              + f"  (first two seeds' mean {np.mean(first_two):.0f})")
    fastest = min(cycles, key=lambda p: np.mean(list(cycles[p].values()))) if cycles else None
    for a, b in itertools.combinations(sorted(cycles), 2):
        if len(cycles) > 3 and fastest not in (a, b):  # many policies: pairs with the fastest
            continue
        shared = sorted(set(cycles[a]) & set(cycles[b]))
        if len(shared) < 2:
            continue
        diff = np.array([cycles[a][s] / cycles[b][s] - 1 for s in shared])
        mean, half = interval(diff)
        verdict = ("cannot order" if abs(mean) <= half else
                   f"{a if mean < 0 else b} faster")
        first = np.mean([cycles[a][s] for s in shared[:2]]) / np.mean(
            [cycles[b][s] for s in shared[:2]]) - 1
        print(f"  {a} / {b} - 1: {mean:+.1%} +- {half:.1%} over {len(shared)} seeds "
              f"(paired) -> {verdict}; seeds {shared[0]},{shared[1]} alone: {first:+.1%}")
    if (found := two_seed_verdict(cycles)) is not None:
        two, best, cost = found
        print(f"  the first two seeds pick {two}, all {min(len(c) for c in cycles.values())} "
              f"pick {best}: the two-seed pick costs {cost:.2%} on the mean of all")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--shape", type=int, choices=(8, 16), default=16)
    parser.add_argument("--cases", required=True, help="size@load,...")
    parser.add_argument("--policies", required=True,
                        help="comma-separated policy names, or all (every online policy)")
    parser.add_argument("--seeds", default="0-5")
    parser.add_argument("--pattern", default="all2all")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--no-run", action="store_true")
    args = parser.parse_args()
    setup_django()
    shape = SHAPE_16 if args.shape == 16 else SHAPE_8
    policies = ONLINE_POLICIES if args.policies == "all" else tuple(args.policies.split(","))
    seeds = seed_list(args.seeds)
    cache = default_cache_dir()
    cases = [(int(n), float(u)) for n, u in (c.split("@") for c in args.cases.split(","))]
    plans = []
    for n, u in cases:
        held = live_occupancy(shape, u, LIVE_SEED + int(100 * u) + shape.node_count)
        plans.append(((n, u), live_tasks(shape, args.pattern, n, held, policies, seeds,
                                         ("live", shape_label(shape), n, u))))
    todo = [t for _, tasks in plans for t in tasks if cached(cache, t) is None]
    print(f"# {len(todo)} of {sum(len(t) for _, t in plans)} runs to simulate "
          f"on {args.processes} processes (load {os.getloadavg()[0]:.2f})", flush=True)
    if todo and not args.no_run:
        with Pool(args.processes) as pool:
            for done, record in enumerate(pool.imap_unordered(
                    run_task, [(cache, t) for t in todo]), 1):
                print(f"# {done}/{len(todo)} {record['label']} {record['wall_seconds']:.1f} s",
                      flush=True)
    verdicts = []
    for (n, u), tasks in plans:
        cycles: dict[str, dict[int, int]] = {}
        for t in tasks:
            found = cached(cache, t)
            if found and found.get("completion_cycles") is not None:
                cycles.setdefault(t.label[-2], {})[t.label[-1]] = found["completion_cycles"]
        report(f"{shape_label(shape)} {args.pattern} {n}@{u:.0%} (live machine, "
               f"occupancy seed {LIVE_SEED} + 100 x load + nodes)", cycles)
        verdicts.append(two_seed_verdict(cycles))
    if len(verdicts) > 1 and all(verdicts):
        costs = [v[2] for v in verdicts]
        print(f"\n{len(verdicts)} cases: the first two seeds pick the fastest on every seed "
              f"in {sum(v[0] == v[1] for v in verdicts)}; cost of their pick on the mean "
              f"of all seeds: mean {np.mean(costs):.2%}, max {max(costs):.2%}")


if __name__ == "__main__":
    main()
