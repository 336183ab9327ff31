"""Speed of the pure spare-node core.

Run from the repository root::

    .venv/bin/python benchmarks/bench_spares.py [--repeat 7] [--seed 0]

Prints the median wall time (after one warm-up call) of:

1. ``recommend_spares`` (whole curve and exact optimum) for N_node = 100,
   1,000, 10,000 and 100,000, plus materialising the 100,000-point curve as
   ``CurvePoint`` objects and as ``as_dict()`` (what a view serialises);
2. ``recommend_spares_for_nodes`` with 1,000 candidates (Poisson-binomial);
3. ``estimate`` and ``node_suspicion`` over a 100,000-run history.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from health.maths import (
    SpareParameters,
    classify,
    estimate,
    node_suspicion,
    recommend_spares,
    recommend_spares_for_nodes,
    synthetic_history,
)


def _median_time(fn: Callable[[], Any], repeat: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _row(label: str, seconds: float, extra: str = "") -> None:
    print(f"  {label:<52} {1000 * seconds:>10.2f} ms  {extra}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    repeat = args.repeat
    params = SpareParameters(p_abn=0.026, alpha_abn=3.53, t_bench=0.0167)

    print(f"recommend_spares (p=0.026, alpha=3.53, t_bench=0.0167, t_cmpt=100), median of {repeat}")
    for n_node in (100, 1_000, 10_000, 100_000):
        rec = recommend_spares(n_node, params, 100.0)
        seconds = _median_time(lambda n=n_node: recommend_spares(n, params, 100.0), repeat)
        _row(f"N_node = {n_node:,}", seconds, f"n_spare = {rec.n_spare:,}")
    rec = recommend_spares(100_000, params, 100.0)
    seconds = _median_time(lambda: recommend_spares(100_000, params, 100.0).curve, repeat)
    _row("N_node = 100,000 incl. 100,001 CurvePoint objects", seconds)
    seconds = _median_time(lambda: recommend_spares(100_000, params, 100.0).as_dict(), repeat)
    _row("N_node = 100,000 incl. as_dict()", seconds)
    seconds = _median_time(
        lambda: recommend_spares(100_000, params, 100.0, stride=100, max_curve_points=1001),
        repeat,
    )
    _row("N_node = 100,000, stride=100, max_curve_points=1001", seconds)
    seconds = _median_time(lambda: recommend_spares(10_000_000, params, 100.0), max(1, repeat // 3))
    _row("N_node = 10,000,000 (auto stride)", seconds)

    print("\nrecommend_spares_for_nodes (Poisson-binomial), median of", repeat)
    rng = np.random.default_rng(args.seed)
    for n_cand, n_node in ((1_000, 500), (1_000, 900), (10_000, 5_000)):
        p = rng.beta(0.5, 20.0, size=n_cand)
        rec = recommend_spares_for_nodes(p, n_node, 3.53, 0.0167, 100.0)
        seconds = _median_time(
            lambda p=p, n=n_node: recommend_spares_for_nodes(p, n, 3.53, 0.0167, 100.0), repeat
        )
        _row(f"{n_cand:,} candidates, N_node = {n_node:,}", seconds, f"n_spare = {rec.n_spare}")

    print("\nestimation over a history, median of", max(1, repeat // 2))
    runs = synthetic_history(1042, 96, 0.026, 3.53, 0.0167, noise=0.02, seed=args.seed)
    print(f"  ({len(runs):,} node-runs, 1,042 jobs of 96 nodes)")
    few = max(1, repeat // 2)
    _row("classify", _median_time(lambda: classify(runs), few))
    _row("estimate", _median_time(lambda: estimate(runs), few))
    result = classify(runs)
    _row(
        "node_suspicion (given flags)",
        _median_time(lambda: node_suspicion(runs, result.flags, result.ratios), few),
    )


if __name__ == "__main__":
    main()
