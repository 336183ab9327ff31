"""The confidence interval of alpha_abn (the slowdown of abnormal node-runs): it
covers the true slowdown about as often as its level says, on histories with a
known answer."""

from __future__ import annotations

import numpy as np
import pytest

from health.maths import estimate, ratio_interval, synthetic_history

ALPHA = 3.53


def coverage(confidence: float, job_noise: float, seeds: int = 200) -> float:
    hits = 0
    for seed in range(seeds):
        runs = synthetic_history(20, 64, p_abn=0.026, alpha_abn=ALPHA, t_bench=0.0167,
                                 seed=seed, job_noise=job_noise)
        low, high = estimate(runs, confidence=confidence).alpha_abn_interval
        hits += low <= ALPHA <= high
    return hits / seeds


@pytest.mark.parametrize("job_noise", [0.0, 0.05])
def test_a_95_percent_interval_covers_the_true_slowdown_about_95_percent_of_the_time(
        job_noise):
    assert 0.90 <= coverage(0.95, job_noise) <= 0.99


def test_a_50_percent_interval_covers_it_about_half_the_time():
    """The level matters: a narrower interval misses more often."""
    assert 0.35 <= coverage(0.5, 0.0) <= 0.65


def test_the_interval_is_around_the_estimate_and_stored_in_the_dict():
    runs = synthetic_history(20, 64, p_abn=0.026, alpha_abn=ALPHA, t_bench=0.0167, seed=1)
    est = estimate(runs)
    low, high = est.alpha_abn_interval
    assert low < est.alpha_abn < high
    assert est.as_dict()["alpha_abn_interval"] == [low, high]


def test_no_interval_without_two_abnormal_runs():
    runs = [("j1", f"n{i}", "b", 0.017 * (1 + 0.001 * i)) for i in range(12)]
    assert estimate([*runs, ("j1", "slow", "b", 0.06)]).alpha_abn_interval is None
    assert estimate(runs).alpha_abn_interval is None  # no abnormal run: no alpha either


def test_ratio_interval_by_hand():
    """a = [3.4, 3.6, 3.5], b = [0.99, 1.0, 1.01, 1.0]: ratio 3.5, se(log) = 0.01699,
    Welch-Satterthwaite dof 2.247, t = 3.897: 3.5 * exp(-/+ 0.0662)."""
    low, high = ratio_interval(np.array([3.4, 3.6, 3.5]), np.array([0.99, 1.0, 1.01, 1.0]))
    assert low == pytest.approx(3.5 * np.exp(-0.06623), rel=2e-3)
    assert high == pytest.approx(3.5 * np.exp(0.06623), rel=2e-3)
    with pytest.raises(ValueError, match="confidence"):
        ratio_interval(np.ones(3), np.ones(3), confidence=1.0)
