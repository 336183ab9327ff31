"""benchmarks/ordering_seeds.py: its runs are the reproduction sweep's own (a point of
the stored reference comes out with the reference's cycles), and its per-seed ratios
pair each policy with Diagonal on the same pattern, replicas and seed."""

from __future__ import annotations

import json
from types import ModuleType

import pytest

from simulation.reproduction_preset import ordering_configs
from tests.benchmark_scripts import load_benchmark


@pytest.fixture(scope="module")
def script() -> ModuleType:
    return load_benchmark("ordering_seeds")


def test_a_run_is_the_stored_references(script: ModuleType) -> None:
    reference = json.loads(script.REFERENCE.read_text(encoding="utf-8"))
    stored = next(r for r in reference["records"] if r["point"]["part"] == "escalation_min"
                  and r["point"]["replicas"] == 2 and r["point"]["seed"] == 1)
    item = next((p, c) for p, c in ordering_configs(2)
                if script.point_key(p) == script.point_key({"replicas": 1, **stored["point"]}))
    key, record = script.run_point(item)
    assert record["makespan_cycles"] == stored["makespan_cycles"]
    shared, differ = script.check_reference({key: record})
    assert (shared, differ) == (1, [])
    assert script.check_reference({key: {**record, "makespan_cycles": 1}}) == (1, [key])


def test_per_seed_ratios_pair_each_policy_with_diagonal(script: ModuleType) -> None:
    def rec(policy: str, pattern: str, replicas: int, seed: int, cycles: int) -> dict:
        point = {"part": "escalation_min", "policy": policy, "pattern": pattern,
                 "ranks": 64, "replicas": replicas, "seed": seed}
        return {"point": point, "status": "succeeded", "makespan_cycles": cycles}

    records = [rec("diagonal", "uniform", 1, 0, 100), rec("row", "uniform", 1, 0, 150),
               rec("diagonal", "uniform", 2, 0, 200), rec("row", "uniform", 2, 0, 200),
               rec("diagonal", "permutation", 1, 0, 100), rec("row", "permutation", 1, 0, 80),
               rec("diagonal", "uniform", 1, 1, 100), rec("row", "uniform", 1, 1, 110)]
    assert script.per_seed(records, "escalation_min", "row") == \
        pytest.approx([(1.5 + 1.0 + 0.8) / 3, 1.1])
    assert script.per_seed(records, "escalation_min", "row", "uniform") == \
        pytest.approx([1.25, 1.1])
