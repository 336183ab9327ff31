"""The Monte Carlo simulation agrees with the closed form."""

from __future__ import annotations

import json

import pytest

from health.maths import SpareParameters, recommend_spares, simulate_cost

CASES = [
    # n_node, n_spare, p, alpha, t_bench, t_cmpt, t_comm
    (100, 0, 0.005, 10.0, 0.1, 10.0, 5.0),
    (100, 3, 0.005, 10.0, 0.1, 10.0, 5.0),
    (100, 7, 0.026, 3.53, 0.0167, 50.0, 50.0),
    (100, 2, 0.026, 3.53, 0.0167, 100.0, 0.0),
    (16, 4, 0.2, 2.0, 5.0, 10.0, 1.0),
    (500, 20, 0.026, 3.53, 1.0, 10.0, 90.0),
    (64, 30, 0.3, 1.5, 2.0, 20.0, 0.0),
]


@pytest.mark.parametrize(("n_node", "n_spare", "p", "alpha", "t_bench", "t_cmpt", "t_comm"), CASES)
def test_mean_agrees_with_closed_form(n_node, n_spare, p, alpha, t_bench, t_cmpt, t_comm):
    params = SpareParameters(p, alpha, t_bench)
    res = simulate_cost(n_node, n_spare, params, t_cmpt, t_comm, trials=20_000, seed=11)
    assert abs(res.z_score) < 4.0
    assert abs(res.mean_cost - res.expected_cost) < 4.0 * res.model_stderr + 1e-9
    # The sample standard error agrees with the model's unless costly events are rare.
    if res.p_abnormal_kept > 0.01:
        assert res.stderr == pytest.approx(res.model_stderr, rel=0.1)
    assert res.mean_time == pytest.approx(res.mean_cost / (n_node + n_spare))


def test_seeded_and_deterministic():
    params = SpareParameters(0.05, 3.0, 1.0)
    a = simulate_cost(50, 3, params, 10.0, trials=2000, seed=5)
    b = simulate_cost(50, 3, params, 10.0, trials=2000, seed=5)
    c = simulate_cost(50, 3, params, 10.0, trials=2000, seed=6)
    assert a == b
    assert a.mean_cost != c.mean_cost


def test_recommended_optimum_checked_by_simulation():
    params = SpareParameters(0.026, 3.53, 0.0167)
    rec = recommend_spares(100, params, 50.0, 50.0)
    res = simulate_cost(100, rec.n_spare, params, 50.0, 50.0, trials=20_000, seed=2)
    assert abs(res.z_score) < 4.0
    assert res.expected_cost == pytest.approx(rec.expected_cost)


def test_large_job_chunked():
    params = SpareParameters(0.01, 4.0, 0.5)
    res = simulate_cost(5000, 80, params, 100.0, trials=1000, seed=1)  # several chunks
    assert abs(res.z_score) < 4.0


def test_noise_option_and_json():
    params = SpareParameters(0.05, 1.2, 1.0)
    res = simulate_cost(50, 5, params, 10.0, trials=2000, seed=0, bench_noise=0.2)
    # With noise larger than the slowdown, dropping the slowest misses abnormal nodes.
    exact = simulate_cost(50, 5, params, 10.0, trials=2000, seed=0)
    assert res.p_abnormal_kept > exact.p_abnormal_kept
    d = res.as_dict()
    assert json.loads(json.dumps(d)) == d
    assert all(type(d[k]) is float for k in ("mean_cost", "stderr", "mean_time", "z_score"))


def test_validation():
    params = SpareParameters(0.05, 3.0, 1.0)
    with pytest.raises(ValueError, match="trials"):
        simulate_cost(10, 1, params, 1.0, trials=1)
    with pytest.raises(ValueError, match="n_spare"):
        simulate_cost(10, -1, params, 1.0)
    with pytest.raises(ValueError, match="bench_noise"):
        simulate_cost(10, 1, params, 1.0, bench_noise=-0.1)
    with pytest.raises(ValueError, match="seed"):
        simulate_cost(10, 1, params, 1.0, seed=1.5)
