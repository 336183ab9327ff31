"""Evidence for our own policy: least_loaded_diagonal against diagonal.

A reproducible sweep on the reference machine (8x8, c = 8) in the engine's
faithful study mode: resident jobs (64 nodes each, placed with a seeded mix of
policies) occupy 25, 50 or 75 % of the machine and send random-permutation
background traffic at the study's full load; a 64-node target job is placed by
``diagonal`` or by ``least_loaded_diagonal`` on that same occupancy, and its
kernel (the study's five, at the study's volume) is simulated with the
resident jobs as background (the engine's ``background`` scenario, Omni-WAR,
shared VCs: what a recommendation simulates). Prints the target's completion
time per case, the ratio ours / diagonal (below 1: ours is faster) as a mean
over the seeds with the half-width of its 95 % Student-t interval, and a
summary of where ours wins and where it does not (by more than 2 %, and
with the interval clear of 1). Runs use two processes.

Usage: .venv/bin/python benchmarks/own_policy_evidence.py [--seeds 3] [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import time
from multiprocessing import Pool

import numpy as np

from allocation.hyperx import HyperX, allocate
from simulation.engine import ENGINE_VERSION, SimConfig, simulate
from simulation.reproduction import mean_interval

RESIDENT_POLICIES = ("row", "random_switch", "diagonal", "rectangular")


def occupancy(hx: HyperX, jobs: int, seed: int) -> np.ndarray:
    """Busy mask after ``jobs`` resident 64-node jobs with seeded policies."""
    rng = np.random.default_rng(seed)
    free = np.ones(hx.n_endpoints, dtype=bool)
    for _ in range(jobs):
        policy = RESIDENT_POLICIES[rng.integers(len(RESIDENT_POLICIES))]
        part = allocate(hx, free, policy, 64, seed=int(rng.integers(1 << 30)))
        free[part] = False
    return ~free


def target_cycles(hx: HyperX, busy: np.ndarray, policy: str, kernel: str, rate: float,
                  seed: int) -> int:
    part = allocate(hx, ~busy, policy, 64, seed=seed, busy=busy)
    config = SimConfig(sides=hx.sides, concentration=hx.concentration, routing="omniwar",
                       scenario="background", pattern=kernel, ranks=64, policy=policy,
                       background_rate=rate, seed=seed, max_cycles=2_000_000)
    result = simulate(config, [part, np.nonzero(busy)[0]])
    app = result.apps[0]
    assert app.completion_cycles is not None, "the target did not finish"
    return int(app.completion_cycles)


def _case(args: tuple[int, str, float, int, str]) -> int:
    jobs, kernel, rate, seed, policy = args
    hx = HyperX((8, 8), 8)
    return target_cycles(hx, occupancy(hx, jobs, seed), policy, kernel, rate, seed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one kernel, one seed")
    args = parser.parse_args()
    hx = HyperX((8, 8), 8)
    kernels = ("all2all",) if args.quick else (
        "all2all", "allreduce", "stencil4", "stencil8", "random_involution")
    rates = (1.0,)
    seeds = 1 if args.quick else args.seeds
    start = time.perf_counter()
    cases = [(jobs, kernel, rate, seed, policy) for jobs in (2, 4, 6) for kernel in kernels
             for rate in rates for seed in range(seeds)
             for policy in ("diagonal", "least_loaded_diagonal")]
    with Pool(2) as pool:
        cycles = dict(zip(cases, pool.map(_case, cases, chunksize=1), strict=True))
    print(f"engine {ENGINE_VERSION}; {seeds} seeds")
    print(f"{'load':>5} {'kernel':<18} {'bg rate':>7} {'diagonal':>10} {'ours':>10} "
          f"{'ours/diag':>9} {'+-':>6}")
    summary = []
    for jobs in (2, 4, 6):
        for kernel in kernels:
            for rate in rates:
                ratios, diag_c, ours_c = [], [], []
                for seed in range(seeds):
                    d = cycles[(jobs, kernel, rate, seed, "diagonal")]
                    o = cycles[(jobs, kernel, rate, seed, "least_loaded_diagonal")]
                    ratios.append(o / d)
                    diag_c.append(d)
                    ours_c.append(o)
                ratio = statistics.mean(ratios)
                interval = mean_interval(ratios)
                half = interval["half_width"] if interval else float("nan")
                summary.append((jobs * 64 / hx.n_endpoints, kernel, rate, ratio, half))
                print(f"{jobs * 64 / hx.n_endpoints:>5.0%} {kernel:<18} {rate:>7.1f} "
                      f"{statistics.mean(diag_c):>10.0f} {statistics.mean(ours_c):>10.0f} "
                      f"{ratio:>9.3f} {half:>6.3f}")
    wins = [s for s in summary if s[3] < 0.98]
    losses = [s for s in summary if s[3] > 1.02]
    clear_wins = [s for s in wins if s[3] + s[4] < 1]
    clear_losses = [s for s in losses if s[3] - s[4] > 1]
    print(f"\n{len(summary)} cases x {seeds} seeds in {time.perf_counter() - start:.0f} s; "
          f"ours faster by > 2 % in {len(wins)} ({len(clear_wins)} with the interval clear of 1), "
          f"slower by > 2 % in {len(losses)} ({len(clear_losses)}), "
          f"within 2 % in {len(summary) - len(wins) - len(losses)}")
    for load, kernel, rate, ratio, half in sorted(summary, key=lambda s: s[3])[:3]:
        print(f"  best for ours: load {load:.0%}, {kernel}, background {rate}: "
              f"x{ratio:.3f} +- {half:.3f}")
    for load, kernel, rate, ratio, half in sorted(summary, key=lambda s: s[3])[-3:]:
        print(f"  worst for ours: load {load:.0%}, {kernel}, background {rate}: "
              f"x{ratio:.3f} +- {half:.3f}")


if __name__ == "__main__":
    main()
