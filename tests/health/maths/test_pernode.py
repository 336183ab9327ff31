"""Tests of the per-node (Poisson-binomial) spare-node model."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import poisson_binom

from health.maths import (
    SpareParameters,
    choose_candidates,
    poisson_binomial_tails,
    recommend_spares,
    recommend_spares_for_nodes,
)


@pytest.mark.parametrize(
    ("p", "alpha", "t_bench", "t_cmpt", "t_comm"),
    [
        (0.005, 10.0, 0.1, 10.0, 5.0),
        (0.026, 3.53, 0.0167, 100.0, 0.0),
        (0.026, 3.53, 0.0167, 50.0, 50.0),
        (0.026, 3.53, 0.0167, 10.0, 90.0),
        (0.2, 2.0, 1.0, 30.0, 0.0),
    ],
)
def test_equal_probabilities_match_binomial_model(p, alpha, t_bench, t_cmpt, t_comm):
    n = 100
    per_node = recommend_spares_for_nodes([p] * (2 * n), n, alpha, t_bench, t_cmpt, t_comm)
    binomial = recommend_spares(n, SpareParameters(p, alpha, t_bench), t_cmpt, t_comm)
    assert per_node.n_spare == binomial.n_spare
    assert per_node.expected_cost == pytest.approx(binomial.expected_cost, rel=1e-12)
    assert per_node.as_is_cost == pytest.approx(binomial.as_is_cost, rel=1e-12)
    assert per_node.saving_ratio == pytest.approx(binomial.saving_ratio, rel=1e-12)
    np.testing.assert_allclose(
        per_node.curve_expected_cost, binomial.curve_expected_cost, rtol=1e-11
    )
    assert per_node.p_abn == pytest.approx(p)
    assert per_node.chosen == tuple(range(n + per_node.n_spare))


def test_tails_match_scipy_poisson_binom():
    rng = np.random.default_rng(3)
    p = np.sort(rng.beta(0.5, 12.0, size=400))
    n = 250
    tails = poisson_binomial_tails(p, n)
    reference = np.array([poisson_binom.sf(s, p[: n + s]) for s in range(p.size - n + 1)])
    # scipy computes the sf as 1 - cdf, so compare absolutely near 1e-15.
    np.testing.assert_allclose(tails, reference, rtol=1e-9, atol=1e-13)


@settings(max_examples=40, deadline=None)
@given(
    p=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=40),
    data=st.data(),
)
def test_tails_property(p, data):
    n = data.draw(st.integers(1, len(p)))
    tails = poisson_binomial_tails(p, n)
    reference = np.array([poisson_binom.sf(s, p[: n + s]) for s in range(len(p) - n + 1)])
    np.testing.assert_allclose(tails, reference, atol=1e-12)


def test_heterogeneous_curve_matches_direct_evaluation():
    rng = np.random.default_rng(7)
    p = rng.beta(0.4, 15.0, size=60)
    n, alpha, t_bench, t_cmpt, t_comm = 40, 4.0, 0.2, 30.0, 10.0
    rec = recommend_spares_for_nodes(p, n, alpha, t_bench, t_cmpt, t_comm)
    ps = np.sort(p, kind="stable")
    for s, cost in zip(rec.curve_n_spare, rec.curve_expected_cost, strict=True):
        chosen = ps[: n + s]
        p_any = 1.0 - np.prod(1.0 - chosen)
        tail = poisson_binom.sf(s, chosen)
        e_time = t_bench * (1 + (alpha - 1) * p_any) + t_cmpt + t_comm + (alpha - 1) * t_cmpt * tail
        assert cost == pytest.approx((n + s) * e_time, rel=1e-9)
    assert rec.n_spare == int(np.argmin(rec.curve_expected_cost))
    assert len(rec.chosen) == n + rec.n_spare
    assert set(rec.chosen) == set(np.argsort(p, kind="stable")[: n + rec.n_spare].tolist())


def test_suspicious_candidates_are_avoided():
    p = [0.9] * 10 + [0.001] * 60
    rec = recommend_spares_for_nodes(p, 50, 3.0, 0.1, 100.0)
    assert all(i >= 10 for i in rec.chosen)
    assert rec.p_abn == pytest.approx(0.001)


def test_choose_candidates_order_and_ties():
    assert choose_candidates([0.2, 0.1, 0.1, 0.0], 4) == (3, 1, 2, 0)
    assert choose_candidates([0.2, 0.1], 0) == ()
    with pytest.raises(ValueError, match="n_total"):
        choose_candidates([0.2, 0.1], 3)


def test_validation():
    with pytest.raises(ValueError, match="at least n_node"):
        recommend_spares_for_nodes([0.1] * 5, 6, 2.0, 1.0, 1.0)
    with pytest.raises(ValueError, match=r"node_p_abn\[1\]"):
        recommend_spares_for_nodes([0.1, 1.5, 0.1], 2, 2.0, 1.0, 1.0)
    with pytest.raises(ValueError, match=r"node_p_abn\[0\]"):
        recommend_spares_for_nodes([float("nan"), 0.1], 1, 2.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="alpha_abn"):
        recommend_spares_for_nodes([0.1] * 5, 2, 1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="t_bench"):
        recommend_spares_for_nodes([0.1] * 5, 2, 2.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="n_node"):
        recommend_spares_for_nodes([0.1] * 5, 0, 2.0, 1.0, 1.0)


def test_exactly_n_node_candidates_and_json():
    rec = recommend_spares_for_nodes([0.01, 0.02, 0.03], 3, 2.0, 1.0, 10.0)
    assert rec.n_spare == 0
    assert len(rec.curve) == 1
    d = rec.as_dict()
    assert d["chosen"] == [0, 1, 2]
    assert json.loads(json.dumps(d)) == d


def test_thousand_candidates_fast_enough():
    import time

    p = np.random.default_rng(0).beta(0.5, 20.0, size=1000)
    start = time.perf_counter()
    rec = recommend_spares_for_nodes(p, 500, 3.53, 0.0167, 100.0)
    assert time.perf_counter() - start < 1.0
    assert len(rec.curve) == 501
