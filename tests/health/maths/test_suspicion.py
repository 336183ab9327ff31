"""Per-node suspicion and drain candidates."""

from __future__ import annotations

import json

import numpy as np
import pytest

from health.maths import (
    BenchmarkRun,
    NodeSuspicion,
    classify,
    drain_candidates,
    node_suspicion,
    synthetic_history,
)


def test_repeatedly_bad_nodes_top_the_list():
    runs, _truth = synthetic_history(
        300,
        96,
        0.02,
        3.53,
        0.0167,
        noise=0.02,
        n_nodes_pool=1000,
        seed=21,
        bad_nodes=5,
        bad_p_abn=0.4,
        return_flags=True,
    )
    ranked = node_suspicion(runs)
    bad = {f"n{i:05d}" for i in range(5)}
    assert {s.node for s in ranked[:5]} == bad
    drains = drain_candidates(runs)
    assert {s.node for s in drains} == bad
    top = ranked[0]
    assert top.abnormal_fraction > 0.2
    assert top.mean_slowdown == pytest.approx(3.53, rel=0.05)
    assert 0 < len(top.evidence) <= 5
    assert all(s.p_interval[0] <= s.p_posterior <= s.p_interval[1] for s in ranked)
    assert [s.score for s in ranked] == sorted((s.score for s in ranked), reverse=True)


def test_one_slow_run_on_a_new_node_does_not_top_the_list():
    runs, flags = [], []
    for j in range(20):
        for i in range(20):
            slow = i == 0 and j % 4 == 0  # n0: 5 abnormal runs out of 20
            runs.append(BenchmarkRun(f"j{j}", f"n{i}", "b", 3.0 if slow else 1.0))
            flags.append(slow)
    runs.append(BenchmarkRun("j20", "new", "b", 3.0))
    flags.append(True)
    ranked = node_suspicion(runs, flags)
    assert ranked[0].node == "n0"
    new = next(s for s in ranked if s.node == "new")
    assert new.abnormal_fraction == 1.0
    assert not new.drain_candidate
    assert new.p_posterior < 0.2


def test_explicit_flags_and_ratios_and_evidence_order():
    runs = [BenchmarkRun(f"j{j}", "x", "b", 1.0) for j in range(8)]
    flags = [True] * 8
    ratios = [2.0] * 8
    (s,) = node_suspicion(runs, flags, ratios, fleet_p=0.01, evidence_count=3)
    assert s.evidence == ("j5", "j6", "j7")
    assert s.mean_slowdown == 2.0
    assert s.drain_candidate
    assert node_suspicion(runs, flags, ratios, fleet_p=0.01, evidence_count=0)[0].evidence == ()


def test_defaults_use_classification():
    runs = synthetic_history(20, 32, 0.05, 4.0, 1.0, noise=0.02, seed=5)
    result = classify(runs)
    assert node_suspicion(runs) == node_suspicion(runs, result.flags, result.ratios)


def test_as_dict_json_and_types():
    runs = synthetic_history(10, 16, 0.1, 4.0, 1.0, noise=0.02, seed=2)
    ranked = node_suspicion(runs)
    assert isinstance(ranked[0], NodeSuspicion)
    for s in ranked:
        d = s.as_dict()
        assert json.loads(json.dumps(d)) == d
        assert type(d["score"]) is float
        assert type(d["runs"]) is int
        assert type(d["drain_candidate"]) is bool


def test_validation():
    runs = [BenchmarkRun("j", f"n{i}", "b", 1.0) for i in range(5)]
    with pytest.raises(ValueError, match="flags"):
        node_suspicion(runs, [False] * 4, [1.0] * 5)
    with pytest.raises(ValueError, match="ratios"):
        node_suspicion(runs, [False] * 5, np.ones(6))
    with pytest.raises(ValueError, match="fleet_p"):
        node_suspicion(runs, fleet_p=0.0)
    with pytest.raises(ValueError, match="drain_probability"):
        node_suspicion(runs, drain_probability=1.0)
    with pytest.raises(ValueError, match="empty"):
        node_suspicion([])
