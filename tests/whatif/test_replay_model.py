"""The run-time adjustments, spare rules and outputs of the replay core."""

from __future__ import annotations

import pytest

from allocation.hyperx import HyperX
from recommendations import constants as rec_constants
from whatif.replay import (
    IDEAL,
    SUMMARY_KEYS,
    Job,
    ModelParameters,
    Scenario,
    SpareRule,
    fit_to_machine,
    gather,
    replay,
    run_one,
    run_study,
    summarise,
    synthetic_workload,
)
from whatif.replay.placement import LOCALITY_PENALTY, analytic_factor

HX = HyperX((4, 4), 4)  # 64 nodes


def test_penalty_is_the_recommendations_one():
    assert rec_constants.LOCALITY_PENALTY == LOCALITY_PENALTY


def test_held_spares_keep_their_nodes_and_released_ones_come_back():
    jobs = [Job(1, 0, 0, 1000, 60, 1000), Job(2, 1, 1, 11, 4, 10)]
    model = ModelParameters(t_bench=5.0, slow_nodes=False, placement=False)
    held = replay(jobs, HX, "row", SpareRule("fixed", 4, release=False), model)
    released = replay(jobs, HX, "row", SpareRule("fixed", 4, release=True), model)
    # job 1 takes all 64 nodes; held, job 2 (8 with spares) waits for the end
    assert held.starts.tolist() == [0.0, 1005.0]
    # released, the 4 dropped nodes come back after the 5 s benchmark; job 2
    # needs 8 (4 + 4 spares) so still waits, but the spares' node-hours differ
    assert released.node_seconds_spares == pytest.approx(64 * 5 + 8 * 5)
    assert held.node_seconds_spares == pytest.approx(64 * 5 + 4 * 1000 + 8 * 5 + 4 * 10)
    assert released.ends[0] == 1005.0


def test_released_spares_let_a_small_job_in_early():
    jobs = [Job(1, 0, 0, 1000, 60, 1000), Job(2, 1, 1, 11, 4, 10)]
    model = ModelParameters(t_bench=5.0, slow_nodes=False, placement=False)
    rule = SpareRule("fixed", 4, release=True)
    r = replay([jobs[0], Job(2, 6, 6, 16, 2, 10)], HX, "row", rule, model)
    assert r.starts[1] == 1005.0  # needs 6 > 4 free
    small = replay([jobs[0], Job(2, 6, 6, 16, 1, 10)], HX, "row",
                   SpareRule("fixed", 3, release=True), model)
    assert small.starts[1] == 6.0  # 1 + 3 spares fit in the 3 + 1 nodes released at 5 s


def test_slow_nodes_slow_the_compute_part_unless_spares_drop_them():
    jobs = [Job(1, 0, 0, 1000, 32, 5000)]
    model = ModelParameters(p_abn=0.2, alpha_abn=3.0, t_bench=0.0, placement=False)
    none = replay(jobs, HX, "row", SpareRule(), model, seed=1)
    assert none.ends[0] == pytest.approx(1000 + 2 * 500)  # half the time is compute
    assert none.node_seconds_lost_slow == pytest.approx(32 * 1000)
    lots = replay(jobs, HX, "row", SpareRule("fixed", 32), model, seed=1)
    assert lots.ends[0] == pytest.approx(1000)
    assert lots.node_seconds_lost_slow == 0


def test_a_slowed_job_is_killed_at_its_limit():
    jobs = [Job(1, 0, 0, 1000, 32, 1200)]
    model = ModelParameters(p_abn=0.5, alpha_abn=3.0, placement=False)
    r = replay(jobs, HX, "row", SpareRule(), model, seed=0)
    assert r.ends[0] == 1200 and r.timeouts == 1


def test_benchmark_time_is_paid_with_spares_only():
    jobs = [Job(1, 0, 0, 100, 8, 200)]
    model = ModelParameters(t_bench=7.0, slow_nodes=False, placement=False)
    assert replay(jobs, HX, "row", SpareRule(), model).ends[0] == 100
    assert replay(jobs, HX, "row", SpareRule("fixed", 1), model).ends[0] == 107


def test_placement_factor_slows_scattered_jobs():
    jobs = [Job(1, 0, 0, 1000, 16, 5000)]
    model = ModelParameters(slow_nodes=False, benchmark=False)
    busy = [Job(0, 0, 0, 9000, 32, 9000), Job(1, 0, 0, 1000, 16, 5000)]
    compact = replay(busy, HX, "row", model=model)
    spread = replay(busy, HX, "full_spread", model=model)
    assert compact.ends[1] == 1000
    # one node per switch, half the machine held: 1 + 0.5 * 0.5 on the half that communicates
    assert spread.ends[1] == pytest.approx(1000 * (0.5 + 0.5 * 1.25))
    assert spread.factor_source == "analytic"
    calibrated = ModelParameters(slow_nodes=False, benchmark=False,
                                 calibration={"full_spread": 1.5})
    r = replay(jobs, HX, "full_spread", model=calibrated)
    assert r.ends[0] == pytest.approx(1000 * (0.5 + 0.5 * 1.5))
    assert r.factor_source == "calibration"


def test_analytic_factor_grows_with_held_machine_without_locality():
    hx = HyperX((8, 8), 8)
    spread = list(range(0, 512, 8))
    assert analytic_factor(hx, spread, 0.8) > analytic_factor(hx, spread, 0.0)
    whole = list(range(64))
    assert analytic_factor(hx, whole, 0.8) == analytic_factor(hx, whole, 0.0) == 1.0


def test_recommended_spares_follow_the_spare_model():
    jobs = [Job(1, 0, 0, 3600, 32, 7200)]
    model = ModelParameters(p_abn=0.01, alpha_abn=2.0, t_bench=30.0)
    r = replay(jobs, HX, "row", SpareRule("recommended"), model)
    assert r.totals[0] > 32
    assert replay(jobs, HX, "row", SpareRule("recommended"), IDEAL).totals[0] == 32


def test_summary_keys_locality_and_seeds():
    jobs, _ = fit_to_machine(synthetic_workload(64, days=3, seed=2, load=2).jobs, 64)
    model = ModelParameters(p_abn=0.01, alpha_abn=1.5, t_bench=20.0)
    a = run_one(jobs, HX, Scenario("random_endpoint", SpareRule()), model, seed=1)
    b = run_one(jobs, HX, Scenario("random_endpoint", SpareRule()), model, seed=1)
    assert a == b
    assert tuple(a["summary"]) == SUMMARY_KEYS
    assert set(a["jobs"][0]) == {"id", "submit", "start", "end", "nodes"}
    row = run_one(jobs, HX, Scenario("row", SpareRule()), IDEAL, seed=1)
    assert row["summary"]["locality_share"] > a["summary"]["locality_share"]
    assert 0 < row["summary"]["utilisation"] <= 1


def test_study_groups_seeds_with_intervals():
    jobs, _ = fit_to_machine(synthetic_workload(64, days=2, seed=5, load=2).jobs, 64)
    model = ModelParameters(p_abn=0.02, alpha_abn=2.0, t_bench=10.0)
    entries = run_study(jobs, HX, [Scenario("row", SpareRule()),
                                   Scenario("row", SpareRule.parse("2"))], model, [0, 1, 2])
    assert [(e["policy"], e["spares"]) for e in entries] == [("row", "none"), ("row", "2")]
    iv = entries[0]["details"]["intervals"]["mean_wait_s"]
    assert iv["n"] == 3 and iv["low"] <= iv["mean"] <= iv["high"]
    assert entries[1]["summary"]["node_hours_spares"] > 0


def test_ideal_with_fixed_spares_reserves_nodes_but_pays_no_benchmark():
    jobs = [Job(1, 0, 0, 100, 60, 100), Job(2, 0, 0, 100, 4, 100)]
    r = replay(jobs, HX, "row", SpareRule("fixed", 4, release=False), IDEAL)
    assert r.starts.tolist() == [0.0, 100.0]
    assert summarise(r, jobs)["node_hours_spares"] == pytest.approx(8 * 100 / 3600)


def test_gather_rejects_nothing_and_keeps_first_seed_jobs():
    runs = [{"policy": "row", "spares": "none", "seed": s, "summary": dict.fromkeys(
        SUMMARY_KEYS, float(s)), "makespan_s": 1.0, "timeouts": 0, "factor_source": "off",
        "series": {}, "wait_cdf": {}, "jobs": [{"seed": s}]} for s in (1, 0)]
    (entry,) = gather(runs)
    assert entry["jobs"] == [{"seed": 0}] and entry["summary"]["mean_wait_s"] == 0.5


@pytest.mark.parametrize(("sides", "c"), [((4, 4), 4), ((8, 8), 8), ((4, 4, 4), 2)])
def test_analytic_factor_is_the_formula_on_the_partition_properties(sides, c):
    """The shortcut (the set's own links already give PB >= 1) changes nothing."""
    import numpy as np

    from allocation.hyperx import allocate
    from allocation.hyperx.properties import partition_properties

    hx = HyperX(sides, c)
    rng = np.random.default_rng(0)
    policies = ["row", "diagonal", "full_spread", "rectangular", "l_shape", "random_switch",
                "random_endpoint"]
    shortcuts = 0
    for trial in range(60):
        free = rng.random(hx.n_endpoints) < rng.uniform(0.3, 1.0)
        size = int(rng.integers(1, int(free.sum()) + 1))
        eps = allocate(hx, free, policies[trial % 7], size, seed=trial)
        props = partition_properties(hx, eps, exact=False)
        expected = 1.0 if props.pb_bound >= 1 else 1.0 / props.pb_bound
        if not props.switch_locality:
            expected *= 1 + LOCALITY_PENALTY * 0.3
        assert analytic_factor(hx, eps, 0.3) == pytest.approx(expected, rel=1e-12)
        shortcuts += props.pb_bound < 1
    if len(sides) == 2:
        assert shortcuts > 0  # some placements do go below PB 1 (the full path is checked)
