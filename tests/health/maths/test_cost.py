"""Tests of the closed-form spare-node cost model (docs/domain.md section 4)."""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from health.maths import (
    DEFAULT_COMPUTE_FRACTION,
    CurvePoint,
    SpareParameters,
    SpareRecommendation,
    SpareTypeError,
    evaluate_as_is,
    evaluate_spares,
    p_abn_from_intervals,
    prob_any_abnormal,
    recommend_spares,
    t_cmpt_from_wall,
)


def brute_force_cost(n_node, n_spare, p, alpha, t_bench, t_cmpt, t_comm):
    """docs/domain.md section 4.1 formulas literally, with exact binomial sums (small N only)."""
    n_total = n_node + n_spare
    p_any = 1.0 - (1.0 - p) ** n_total
    e_bench = t_bench * (1.0 + (alpha - 1.0) * p_any)
    cdf = math.fsum(
        math.comb(n_total, i) * p**i * (1.0 - p) ** (n_total - i) for i in range(n_spare + 1)
    )
    e_app = t_cmpt + t_comm + (alpha - 1.0) * t_cmpt * (1.0 - cdf)
    return n_total * (e_bench + e_app), e_bench + e_app


WORKED = [
    # (p, alpha, t_bench, t_cmpt, t_comm, expected n_spare)
    (0.005, 10.0, 0.1, 10.0, 5.0, 3),
    (0.026, 3.53, 0.0167, 100.0, 0.0, 8),
    (0.026, 3.53, 0.0167, 50.0, 50.0, 7),
    (0.026, 3.53, 0.0167, 10.0, 90.0, 5),
]


@pytest.mark.parametrize(("p", "alpha", "t_bench", "t_cmpt", "t_comm", "n_spare"), WORKED)
def test_worked_cases_match_brute_force(p, alpha, t_bench, t_cmpt, t_comm, n_spare):
    rec = recommend_spares(100, SpareParameters(p, alpha, t_bench), t_cmpt, t_comm)
    assert rec.n_spare == n_spare
    assert len(rec.curve) == 101
    brute = [brute_force_cost(100, s, p, alpha, t_bench, t_cmpt, t_comm) for s in range(101)]
    costs = [c for c, _ in brute]
    assert rec.n_spare == int(np.argmin(costs))
    for point, (cost, e_time) in zip(rec.curve, brute, strict=True):
        assert point.expected_cost == pytest.approx(cost, rel=1e-10)
        assert point.expected_time == pytest.approx(e_time, rel=1e-10)
    as_is_time = t_cmpt + t_comm + (alpha - 1.0) * t_cmpt * (1.0 - (1.0 - p) ** 100)
    assert rec.as_is_time == pytest.approx(as_is_time, rel=1e-12)
    assert rec.as_is_cost == pytest.approx(100 * as_is_time, rel=1e-12)
    assert rec.saving_ratio == pytest.approx(rec.as_is_cost / rec.expected_cost)
    assert rec.expected_cost == pytest.approx(costs[n_spare], rel=1e-10)


def test_worked_case_hand_numbers():
    rec = recommend_spares(100, SpareParameters(0.005, 10.0, 0.1), 10.0, 5.0)
    # As-is: 15 + 9 * 10 * (1 - 0.995^100) = 50.4807 s per node, 100 nodes.
    assert rec.as_is_time == pytest.approx(50.480660716, rel=1e-9)
    assert rec.as_is_cost == pytest.approx(5048.0660716, rel=1e-9)
    assert rec.expected_cost == pytest.approx(1609.9669262, rel=1e-9)
    assert rec.saving_ratio == pytest.approx(3.1355092, rel=1e-6)


def test_as_dict_is_json_ready_and_native():
    rec = recommend_spares(50, SpareParameters(0.026, 3.53, 0.0167), 50.0, 50.0)
    d = rec.as_dict()
    for key in (
        "n_spare",
        "expected_cost",
        "expected_time",
        "as_is_cost",
        "as_is_time",
        "saving_ratio",
        "curve",
    ):
        assert key in d
    assert set(d["curve"][0]) == {"n_spare", "expected_cost", "expected_time"}
    assert type(d["n_spare"]) is int
    for key in (
        "expected_cost",
        "expected_time",
        "as_is_cost",
        "as_is_time",
        "saving_ratio",
        "p_abn",
        "alpha_abn",
        "t_bench",
        "t_cmpt",
        "t_comm",
    ):
        assert type(d[key]) is float, key
    assert all(
        type(pt["n_spare"]) is int and type(pt["expected_cost"]) is float for pt in d["curve"]
    )
    assert json.loads(json.dumps(d)) == d
    assert isinstance(rec.curve, tuple)
    assert isinstance(rec.curve[0], CurvePoint)
    assert rec.curve[rec.n_spare].expected_cost == rec.expected_cost
    assert rec.n_total == 50 + rec.n_spare


def test_results_are_frozen():
    rec = recommend_spares(10, SpareParameters(0.1, 2.0, 1.0), 10.0)
    with pytest.raises(AttributeError):
        rec.n_spare = 3  # type: ignore[misc]
    with pytest.raises(AttributeError):
        SpareParameters(0.1, 2.0, 1.0).p_abn = 0.2  # type: ignore[misc]
    assert isinstance(rec, SpareRecommendation)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"p_abn": -0.1, "alpha_abn": 2.0, "t_bench": 1.0}, "p_abn"),
        ({"p_abn": 1.01, "alpha_abn": 2.0, "t_bench": 1.0}, "p_abn"),
        ({"p_abn": float("nan"), "alpha_abn": 2.0, "t_bench": 1.0}, "p_abn"),
        ({"p_abn": 0.1, "alpha_abn": 1.0, "t_bench": 1.0}, "alpha_abn"),
        ({"p_abn": 0.1, "alpha_abn": float("inf"), "t_bench": 1.0}, "alpha_abn"),
        ({"p_abn": 0.1, "alpha_abn": float("nan"), "t_bench": 1.0}, "alpha_abn"),
        ({"p_abn": 0.1, "alpha_abn": 2.0, "t_bench": 0.0}, "t_bench"),
        ({"p_abn": 0.1, "alpha_abn": 2.0, "t_bench": float("inf")}, "t_bench"),
        ({"p_abn": 0.1, "alpha_abn": 2.0, "t_bench": float("nan")}, "t_bench"),
        ({"p_abn": "0.1", "alpha_abn": 2.0, "t_bench": 1.0}, "p_abn"),
    ],
)
def test_parameter_validation_names_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        SpareParameters(**kwargs)


def test_parameters_store_native_floats():
    params = SpareParameters(np.float64(0.1), np.float32(2.0), np.int64(1))
    assert type(params.p_abn) is float
    assert type(params.alpha_abn) is float
    assert type(params.t_bench) is float
    assert params.as_dict() == {"p_abn": 0.1, "alpha_abn": 2.0, "t_bench": 1.0}


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ((0, 1.0, 0.0), "n_node"),
        ((-5, 1.0, 0.0), "n_node"),
        ((10.0, 1.0, 0.0), "n_node"),
        ((True, 1.0, 0.0), "n_node"),
        ((10, -1.0, 0.0), "t_cmpt"),
        ((10, float("nan"), 0.0), "t_cmpt"),
        ((10, 1.0, float("inf")), "t_comm"),
        ((10, 0.0, 0.0), "t_cmpt \\+ t_comm"),
    ],
)
def test_job_validation(args, field):
    params = SpareParameters(0.01, 2.0, 1.0)
    n_node, t_cmpt, t_comm = args
    with pytest.raises(ValueError, match=field):
        recommend_spares(n_node, params, t_cmpt, t_comm)


def test_other_argument_validation():
    params = SpareParameters(0.01, 2.0, 1.0)
    with pytest.raises(ValueError, match="stride"):
        recommend_spares(10, params, 1.0, stride=0)
    with pytest.raises(ValueError, match="max_curve_points"):
        recommend_spares(10, params, 1.0, max_curve_points=2)
    with pytest.raises(SpareTypeError, match="params"):
        recommend_spares(10, (0.01, 2.0, 1.0), 1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n_spare"):
        evaluate_spares(10, -1, params, 1.0)


def test_numpy_integer_n_node_accepted():
    rec = recommend_spares(np.int64(20), SpareParameters(0.05, 3.0, 0.1), 10.0)
    assert type(rec.n_node) is int
    assert type(rec.n_spare) is int


def test_no_abnormal_nodes_means_no_spares():
    rec = recommend_spares(64, SpareParameters(0.0, 3.0, 0.5), 10.0, 2.0)
    assert rec.n_spare == 0
    assert rec.expected_cost == pytest.approx(64 * 12.5)
    assert rec.as_is_cost == pytest.approx(64 * 12.0)
    assert rec.saving_ratio < 1.0  # the benchmark only costs


def test_all_nodes_abnormal_spares_cannot_help():
    rec = recommend_spares(16, SpareParameters(1.0, 3.0, 0.5), 10.0)
    assert rec.n_spare == 0
    assert rec.as_is_time == pytest.approx(30.0)
    assert rec.expected_time == pytest.approx(1.5 + 30.0)


def test_prob_any_abnormal_tiny_p_is_accurate():
    assert prob_any_abnormal(1000, 1e-12) == pytest.approx(1e-9, rel=1e-6)
    assert prob_any_abnormal(0, 0.3) == 0.0
    np.testing.assert_allclose(prob_any_abnormal(np.array([1, 2]), 0.5), [0.5, 0.75])


def test_evaluate_matches_curve_and_as_is():
    params = SpareParameters(0.026, 3.53, 0.0167)
    rec = recommend_spares(100, params, 50.0, 50.0)
    for s in (0, 7, 100):
        assert evaluate_spares(100, s, params, 50.0, 50.0) == rec.curve[s]
    as_is = evaluate_as_is(100, params, 50.0, 50.0)
    assert (as_is.expected_cost, as_is.expected_time) == (rec.as_is_cost, rec.as_is_time)


def test_t_cmpt_from_wall():
    assert t_cmpt_from_wall(3600.0) == 3600.0 * DEFAULT_COMPUTE_FRACTION
    assert t_cmpt_from_wall(100.0, 0.25) == 25.0
    assert 0.0 < DEFAULT_COMPUTE_FRACTION < 1.0
    with pytest.raises(ValueError, match="compute_fraction"):
        t_cmpt_from_wall(100.0, 0.0)
    with pytest.raises(ValueError, match="compute_fraction"):
        t_cmpt_from_wall(100.0, 1.5)
    with pytest.raises(ValueError, match="wall_time"):
        t_cmpt_from_wall(-1.0)


def test_large_job_is_finite_and_sane():
    params = SpareParameters(0.026, 3.53, 0.0167)
    rec = recommend_spares(100_000, params, 100.0, 0.0)
    costs = np.asarray(rec.curve_expected_cost)
    assert costs.size == 100_001
    assert np.all(np.isfinite(costs))
    mean, sd = 100_000 * 0.026, math.sqrt(100_000 * 0.026 * 0.974)
    # The optimum removes abnormal nodes with high probability: a few sd above the mean.
    assert mean + 2 * sd < rec.n_spare < mean + 10 * sd
    assert rec.saving_ratio > 2.0


def test_large_job_under_100_ms():
    params = SpareParameters(0.026, 3.53, 0.0167)
    best = math.inf
    for _ in range(3):
        start = time.perf_counter()
        rec = recommend_spares(100_000, params, 100.0, 0.0)
        best = min(best, time.perf_counter() - start)
    assert len(rec.curve_n_spare) == 100_001
    assert best < 0.1


@pytest.mark.parametrize("stride", [2, 7, 100, 1000])
def test_stride_keeps_the_exact_optimum_large(stride):
    params = SpareParameters(0.026, 3.53, 0.0167)
    full = recommend_spares(100_000, params, 50.0, 50.0)
    coarse = recommend_spares(100_000, params, 50.0, 50.0, stride=stride)
    assert (coarse.n_spare, coarse.expected_cost) == (full.n_spare, full.expected_cost)
    assert len(coarse.curve_n_spare) < len(full.curve_n_spare)
    assert coarse.curve_n_spare[0] == 0
    assert coarse.curve_n_spare[-1] == 100_000
    assert list(coarse.curve_n_spare) == sorted(set(coarse.curve_n_spare))


@settings(max_examples=60, deadline=None)
@given(
    n_node=st.integers(1, 3000),
    p=st.floats(0.0, 0.5),
    alpha=st.floats(1.01, 50.0),
    t_bench=st.floats(1e-4, 100.0),
    t_cmpt=st.floats(0.0, 1000.0),
    t_comm=st.floats(0.01, 1000.0),
    stride=st.integers(1, 500),
)
def test_stride_optimum_is_exact_property(n_node, p, alpha, t_bench, t_cmpt, t_comm, stride):
    params = SpareParameters(p, alpha, t_bench)
    full = recommend_spares(n_node, params, t_cmpt, t_comm)
    coarse = recommend_spares(n_node, params, t_cmpt, t_comm, stride=stride)
    assert coarse.expected_cost == full.expected_cost
    assert coarse.n_spare == full.n_spare
    costs = np.asarray(full.curve_expected_cost)
    assert np.all(np.isfinite(costs))
    assert full.expected_cost == costs.min()
    # Lower bound: every node at least spends t_bench + t_cmpt + t_comm.
    assert np.all(
        costs >= np.arange(n_node, 2 * n_node + 1) * (t_bench + t_cmpt + t_comm) * (1 - 1e-12)
    )


@pytest.mark.parametrize("max_points", [3, 10, 57])
def test_max_curve_points_thins_but_keeps_key_points(max_points):
    params = SpareParameters(0.026, 3.53, 0.0167)
    full = recommend_spares(5000, params, 100.0)
    thin = recommend_spares(5000, params, 100.0, max_curve_points=max_points)
    ns = thin.curve_n_spare
    assert len(ns) <= max_points
    assert ns[0] == 0
    assert ns[-1] == 5000
    assert full.n_spare in ns
    assert list(ns) == sorted(set(ns))
    assert (thin.n_spare, thin.expected_cost) == (full.n_spare, full.expected_cost)


def test_p_abn_from_intervals():
    assert p_abn_from_intervals(1.0, 3.0) == 0.25
    with pytest.raises(ValueError, match="mean_abnormal_interval"):
        p_abn_from_intervals(1.0, 0.0)
