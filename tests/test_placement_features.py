"""benchmarks/placement_features.py: the load model of a placement (minimal routes split
evenly over the dimension orders)."""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pytest

from allocation.hyperx import MachineShape
from tests.benchmark_scripts import BENCHMARKS, load_benchmark


@pytest.fixture(scope="module")
def features() -> ModuleType:
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(BENCHMARKS))
        return load_benchmark("placement_features")


def test_two_diagonal_switches_split_over_both_orders(features: ModuleType) -> None:
    shape = MachineShape((2, 2), 1)
    loads = features.link_loads(shape, np.array([0, 3]), 2)
    expected = np.zeros((4, 4))
    for a, b in ((0, 1), (1, 3), (0, 2), (2, 3)):
        expected[a, b] = expected[b, a] = 0.5
    assert np.allclose(loads, expected)


def test_features_of_a_job_beside_other_traffic(features: ModuleType) -> None:
    shape = MachineShape((2, 2), 2)
    job, held = np.array([0, 1, 2, 3]), np.array([4, 5])  # switches 0, 1; 2 held
    got = features.features(shape, job, held)
    assert got["switches"] == 2.0
    # 0 <-> 1 carries the job's 2 x 2 / 3 phits a cycle each way and nothing else
    assert got["maxlink"] == pytest.approx(4 / 3) and got["meanlink"] == pytest.approx(4 / 3)
