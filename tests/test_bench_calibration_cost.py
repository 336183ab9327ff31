"""benchmarks/bench_calibration_cost.py: on the 65,536-node machine the background's cost
per held endpoint and cycle comes from the full runs kept for it when there are any, not
from the truncated runs, which time only the first cycles while the network still fills
(they priced its calibration about a quarter low). Nothing is simulated here."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.benchmark_scripts import BENCHMARKS, load_benchmark

HELD_50 = 32_768  # half of the 65,536-node machine


@pytest.fixture(scope="module")
def cost() -> ModuleType:
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(BENCHMARKS))  # the script imports its sibling _calibration_runs
        return load_benchmark("bench_calibration_cost")


def _point(nodes: int, pattern: str, ranks: int, load: float, held: int, cycles: int,
           seconds: float) -> dict:
    return {"label": ["point", pattern, ranks, load, "random_endpoint", 0], "nodes": nodes,
            "ranks": ranks, "busy_endpoints": ranks + held, "cycles": cycles,
            "cpu_seconds": seconds, "wall_seconds": seconds, "completed": True}


def _truncated(busy: int, cycles: int, seconds: float) -> dict:
    return {"busy_endpoints": busy, "ranks": 16, "cycles": cycles, "wall_seconds": seconds,
            "cpu_seconds": seconds, "max_rss_mib": 500, "load_average": 1.0}


def _records(full_a_ns: float | None) -> list[dict]:
    """8x8 idle runs (the kernels' fit) and, when given, one full 65,536-node run."""
    records = [_point(512, "all2all", r, 0.0, 0, 10_000, 1e-6 * r * 10_000)
               for r in (16, 64, 256)]
    if full_a_ns is not None:
        cycles = 60_000
        per_cycle = 1e-6 * 4096 + full_a_ns * 1e-9 * HELD_50
        records.append(_point(65_536, "all2all", 4096, 0.5, HELD_50, cycles, cycles * per_cycle))
    return records


# The first 300 and 900 cycles at half load: 800 ns per held endpoint and cycle.
TRUNCATED = [_truncated(16, 1500, 0.1), _truncated(16, 4500, 0.1),
             _truncated(16 + HELD_50, 300, 300 * 800e-9 * HELD_50),
             _truncated(16 + HELD_50, 900, 900 * 800e-9 * HELD_50)]


def test_the_full_runs_price_the_big_machines_background(cost: ModuleType) -> None:
    model = cost.fit(_records(full_a_ns=1060), TRUNCATED)
    assert model["big"]["a_start"] == pytest.approx(800e-9, rel=1e-3)
    assert model["big"]["a"] == pytest.approx(1060e-9, rel=1e-3)
    seconds = cost.predicted_seconds(model, 65_536, "all2all", 4096, HELD_50, 60_000)
    assert seconds == pytest.approx(60_000 * (1e-6 * 4096 + 1060e-9 * HELD_50), rel=0.01)


def test_without_full_runs_the_truncated_runs_price_it(cost: ModuleType) -> None:
    model = cost.fit(_records(full_a_ns=None), TRUNCATED)
    assert "a_start" not in model["big"]
    assert model["big"]["a"] == pytest.approx(800e-9, rel=1e-3)
