"""Evidence for the drain rule (docs/domain.md section 5.5): on synthetic fleets with a
known set of persistently abnormal nodes, how many the rule finds and how many normal
nodes it flags, next to the previous rule (P[p_i > 3 p] >= 0.9).

    .venv/bin/python benchmarks/drain_rule_evidence.py

Pure core only (no database). Prints one line per case: found / bad nodes, normal nodes
flagged, for the new rule and the old one.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import beta

from health.maths import BenchmarkRun, classify, node_suspicion, synthetic_history

SEEDS = tuple(range(10))


def old_rule(ranked, p_fleet: float) -> set[str]:
    """The rule before issue 22: P[p_i > 3 p_fleet] >= 0.9 under Beta(0.5 + k, b0 + n - k)."""
    a0 = 0.5
    b0 = a0 * (1 - p_fleet) / p_fleet
    return {s.node for s in ranked
            if beta.sf(3 * p_fleet, a0 + s.abnormal_runs, b0 + s.runs - s.abnormal_runs) >= 0.9}


def judge(runs: list[BenchmarkRun], bad: set[str]) -> tuple[int, int, int, int]:
    """(found by the new rule, normal flagged by it, found by the old, normal flagged)."""
    result = classify(runs)
    ranked = node_suspicion(runs, result.flags, result.ratios)
    p_fleet = (float(result.flags.sum()) + 0.5) / (result.flags.size + 1.0)
    new = {s.node for s in ranked if s.drain_candidate}
    old = old_rule(ranked, p_fleet)
    return len(new & bad), len(new - bad), len(old & bad), len(old - bad)


def rounds_case(n_rounds: int, seed: int, slow: float = 1.3) -> tuple[list[BenchmarkRun], set]:
    """Fleet-wide rounds of 512 nodes: six nodes ``slow`` x slower in every round, the
    others abnormal 0.5 % of the time (4x), 1 % noise (the trial of issue 22)."""
    rng = np.random.default_rng(seed)
    bad = {f"n{i:03d}" for i in range(6)}
    runs = []
    for r in range(n_rounds):
        for i in range(512):
            name = f"n{i:03d}"
            factor = slow if name in bad else (4.0 if rng.random() < 0.005 else 1.0)
            runs.append(BenchmarkRun(f"round {r}", name, "b",
                                     factor * float(np.exp(0.01 * rng.standard_normal()))))
    return runs, bad


def _line(case: str, totals: np.ndarray, bad: int) -> None:
    """One case over every seed: found / bad and normal nodes flagged, new rule | old."""
    out_of = bad * len(SEEDS)
    print(f"{case + f' (x{len(SEEDS)} seeds)':<66} {totals[0]:>5}/{out_of:<3} {totals[1]:>5} | "
          f"{totals[2]:>5}/{out_of:<3} {totals[3]:>5}")


def main() -> None:
    print(f"{'case':<66} new: found  false | old: found  false")
    for n_rounds in (2, 3, 5, 20):
        totals = np.zeros(4, dtype=int)
        for seed in SEEDS:
            runs, bad = rounds_case(n_rounds, seed)
            totals += judge(runs, bad)
        _line(f"{n_rounds} rounds of 512 nodes, 6 nodes 1.3x in each", totals, 6)
    for bad_p in (0.4, 0.7):
        totals = np.zeros(4, dtype=int)
        for seed in SEEDS:
            runs = synthetic_history(300, 96, p_abn=0.02, alpha_abn=3.5, t_bench=0.0167,
                                     noise=0.01, n_nodes_pool=1000, seed=seed, bad_nodes=5,
                                     bad_p_abn=bad_p)
            bad = {f"n{i:05d}" for i in range(5)}
            totals += judge(runs, bad)
        _line(f"300 jobs of 96 of 1,000 nodes, p 0.02, 5 nodes p {bad_p}", totals, 5)


if __name__ == "__main__":
    main()
