"""Whether an ordering's verdict stands beyond the seeds' noise: paired per-seed
differences with hand-checked intervals, and the report's fields and headline."""

from __future__ import annotations

import math

import pytest

from simulation.reproduction import aggregate
from simulation.reproduction_noise import FAILS, HOLDS, OPEN, statement_noise
from tests.simulation.test_reproduction import PUBLISHED, T_975_2, VALUES, synthetic_records

CLOSE = {"kind": "close", "policies": ["diagonal", "full_spread"], "tolerance": 0.05}
WORST = {"kind": "worst", "policies": ["rectangular"]}


def test_a_close_call_is_open_and_its_interval_is_the_paired_one():
    per_seed = {"diagonal": {0: 1.0, 1: 1.0, 2: 1.0},
                "full_spread": {0: 0.92, 1: 0.96, 2: 0.97}}
    result = statement_noise(CLOSE, per_seed)
    assert result["verdict"] == OPEN and result["seeds"] == 3
    closest = result["closest"]
    assert (closest["a"], closest["b"]) == ("diagonal", "full_spread")
    assert closest["mean"] == pytest.approx(0.05)
    # Differences 0.08, 0.04, 0.03: sample sd sqrt(0.0007), t(0.975, 2).
    assert closest["half_width"] == pytest.approx(T_975_2 * math.sqrt(0.0007) / math.sqrt(3))
    assert closest["bound"] == 0.05


def test_pairing_by_seed_takes_out_what_the_seeds_share():
    """Both policies move together from seed to seed: unpaired, their intervals would
    overlap; paired, row is worse on every seed by 0.10 +- 0.01."""
    per_seed = {"rectangular": {0: 1.2, 1: 1.6, 2: 2.0},
                "row": {0: 1.09, 1: 1.5, 2: 1.91}}
    result = statement_noise(WORST, per_seed)
    assert result["verdict"] == HOLDS
    assert result["closest"]["mean"] == pytest.approx(0.10)


def test_a_failure_beyond_the_noise_names_the_comparison_that_decides():
    per_seed = {"rectangular": {0: 1.10, 1: 1.12, 2: 1.11},
                "row": {0: 1.30, 1: 1.31, 2: 1.33},   # worse than rectangular on every seed
                "l_shape": {0: 1.09, 1: 1.13, 2: 1.12}}  # as bad, within the noise
    result = statement_noise(WORST, per_seed)
    assert result["verdict"] == FAILS
    assert (result["closest"]["a"], result["closest"]["b"]) == ("rectangular", "row")
    assert result["closest"]["mean"] == pytest.approx(-0.203333, abs=1e-6)


def test_higher_is_better_turns_the_sides():
    per_seed = {"rectangular": {0: 0.5, 1: 0.6}, "row": {0: 0.9, 1: 1.0}}
    assert statement_noise(WORST, per_seed, lower_is_better=False)["verdict"] == HOLDS
    assert statement_noise(WORST, per_seed, lower_is_better=True)["verdict"] == FAILS


def test_fewer_than_two_shared_seeds_give_no_interval():
    per_seed = {"diagonal": {0: 1.0, 1: 1.0}, "full_spread": {1: 0.9, 2: 0.9}}
    assert statement_noise(CLOSE, per_seed) is None


def _noisy(records, part, spread):
    """Each seed's ordering times moved by a seed-dependent factor, per policy."""
    for r in records:
        point = r["point"]
        if point["part"] == part and point["policy"] != "diagonal":
            factor = 1.0 + spread * (1 if point["seed"] % 2 else -1)
            key = "makespan_cycles" if part == "escalation_min" else "completion_cycles"
            r[key] *= factor
    return records


def test_the_report_counts_on_means_and_names_the_verdicts_within_the_noise():
    """a3 (diagonal, random_endpoint 1.02, full_spread 1.03 within 0.05) holds on the
    mean; moved by +-3 % from seed to seed its spread's interval straddles 0.05."""
    records = _noisy(synthetic_records(seeds=4), "escalation_min", 0.03)
    report = aggregate(records, PUBLISHED)
    checks = {c["id"]: c for c in report["orderings"]}
    assert checks["a3"]["holds"] is True and checks["a3"]["noise"]["verdict"] == OPEN
    assert checks["a3"]["noise_detail"].startswith("within the seeds' noise (4 seeds): ")
    assert checks["a1"]["noise"]["verdict"] == HOLDS
    assert checks["b1"]["noise"]["verdict"] == HOLDS  # interference: no noise added
    assert report["agreement"]["unsettled"] == ["a3"]
    assert report["agreement"]["sentence"].endswith(
        "The verdict of a3 lies within the seeds' noise: more seeds could turn it.")
    row = next(r for r in report["parts"]["escalation_min"]["rows"]
               if r["policy"] == "full_spread")
    assert row["by_seed"] == pytest.approx(
        {s: VALUES["full_spread"] * (1.03 if s % 2 else 0.97) for s in range(4)})
    assert row["interval"]["n"] == 4 and row["interval"]["mean"] == pytest.approx(1.03)


def test_a_seed_with_a_missing_pair_is_left_out_of_the_intervals():
    records = [r for r in synthetic_records(seeds=3)
               if not (r["point"]["part"] == "escalation_min" and r["point"]["seed"] == 2
                       and r["point"]["policy"] == "row" and r["point"]["replicas"] == 4)]
    report = aggregate(records, PUBLISHED)
    rows = {r["policy"]: r for r in report["parts"]["escalation_min"]["rows"]}
    assert sorted(rows["row"]["by_seed"]) == [0, 1] and sorted(rows["l_shape"]["by_seed"]) \
        == [0, 1, 2]
    a2 = next(c for c in report["orderings"] if c["id"] == "a2")
    assert a2["noise"]["seeds"] == 2
