"""benchmarks/bench_reproduction_sweep.py: its per-part figures are the part's own runs
(wall from the first start to the last finish, worker and engine seconds per run).
Nothing is simulated here; the script itself needs PostgreSQL, Redis and a worker."""

from __future__ import annotations

from datetime import datetime, timedelta
from types import ModuleType

import pytest

from tests.benchmark_scripts import BENCHMARKS, load_benchmark

T0 = datetime(2026, 12, 6, 20, 0, 0)


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(BENCHMARKS))  # the script imports its siblings
        return load_benchmark("bench_reproduction_sweep")


def _at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def _point(part: str, seed: int) -> dict:
    return {"part": part, "policy": "row", "seed": seed}


def test_each_part_is_summed_over_its_own_runs(bench: ModuleType) -> None:
    rows = [(_point("table4", 0), _at(0), _at(6), 5.0), (_point("table4", 1), _at(1), _at(9), 7.0),
            (_point("escalation_min", 0), _at(9), _at(9.5), 0.1),
            (_point("escalation_min", 1), _at(9.5), _at(10.5), 0.3),
            (_point("escalation_min", 2), _at(10), _at(10.6), 0.2)]
    parts = bench.part_summary(rows)
    assert set(parts) == {"table4", "escalation_min"}
    assert parts["table4"] == {"runs": 2, "wall": 9.0, "worker_per_run": 7.0,
                               "engine_per_run": 6.0, "paired": 0, "paired_worker": None,
                               "paired_in_process": None}
    escalation = parts["escalation_min"]
    assert escalation["runs"] == 3 and escalation["wall"] == pytest.approx(1.6)
    assert escalation["worker_per_run"] == pytest.approx(0.7)
    assert escalation["engine_per_run"] == pytest.approx(0.2)


def test_the_baseline_is_paired_with_the_same_points(bench: ModuleType) -> None:
    rows = [(_point("escalation_min", 0), _at(0), _at(0.5), 0.4),
            (_point("escalation_min", 1), _at(0), _at(2.0), 1.9),
            (_point("escalation_min", 2), _at(0), _at(0.3), 0.2)]
    baseline = {bench._key(_point("escalation_min", 1)): 1.0,
                bench._key(_point("table4", 1)): 9.0}  # another part's point: not paired
    row = bench.part_summary(rows, baseline)["escalation_min"]
    assert (row["paired"], row["paired_worker"], row["paired_in_process"]) == (1, 2.0, 1.0)
