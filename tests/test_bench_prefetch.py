"""benchmarks/bench_prefetch.py: the work given to each machine and the ratio
line, from times it is given.  No speed is asserted."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.benchmark_scripts import load_benchmark


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("bench_prefetch")


def test_every_machine_gets_the_same_endpoint_cycles(bench: ModuleType) -> None:
    assert bench.cycles_for("8x8c8", 20_000_000) == 39_062  # 512 endpoints
    assert bench.cycles_for("16x16x16c16", 20_000_000) == 305  # 65,536 endpoints
    assert bench.cycles_for("16x16x16c16", 1_000) == 200  # never fewer than 200


def test_ratio_is_time_off_over_time_on_pair_by_pair(bench: ModuleType) -> None:
    line = bench.ratio_line("m", on=[1.0, 2.0, 4.0], off=[1.5, 2.0, 2.0])
    assert "on 2.00 s, off 2.00 s CPU (medians of 3)" in line
    assert "1.00x the speed (median of pairs); pairs 1.50, 1.00, 0.50" in line
