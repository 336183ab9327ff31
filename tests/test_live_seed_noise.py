"""benchmarks/live_seed_noise.py: paired seed comparisons and what two seeds alone pick
(the pure parts; the script's runs are the agreement's live ones)."""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pytest

from tests.benchmark_scripts import BENCHMARKS, load_benchmark


@pytest.fixture(scope="module")
def noise() -> ModuleType:
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(BENCHMARKS))
        return load_benchmark("live_seed_noise")


def test_seed_lists(noise: ModuleType) -> None:
    assert noise.seed_list("0-3") == (0, 1, 2, 3)
    assert noise.seed_list("1,5") == (1, 5)


def test_interval_is_the_student_95_percent_half_width(noise: ModuleType) -> None:
    mean, half = noise.interval(np.array([1.0, 3.0]))
    assert mean == 2.0 and half == pytest.approx(12.706, rel=1e-3)
    assert np.isnan(noise.interval(np.array([5.0]))[1])


def test_two_seeds_can_pick_other_than_all(noise: ModuleType, capsys) -> None:
    cycles = {"a": {0: 100, 1: 100, 2: 100, 3: 100}, "b": {0: 90, 1: 90, 2: 150, 3: 150}}
    assert noise.two_seed_verdict(cycles) == ("b", "a", pytest.approx(0.2))
    assert noise.two_seed_verdict({"a": {0: 1}}) is None
    noise.report("case", cycles)
    out = capsys.readouterr().out
    assert "b / a - 1: +20.0%" not in out  # pairs are named in sorted order: a / b
    assert "a / b - 1:" in out and "cannot order" in out
    assert "the first two seeds pick b, all 4 pick a: the two-seed pick costs 20.00%" in out
