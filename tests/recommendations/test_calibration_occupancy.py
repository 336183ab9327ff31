"""The calibration's machine: other jobs as on a machine Slurm has scheduled a while.

Its jobs are sized by Lublin and Feitelson's law and placed by Slurm's best fit over
runs of consecutive free nodes, arriving and ending in turn; so, unlike a machine
filled once from empty, it has holes between jobs and switches shared by small ones."""

from __future__ import annotations

import numpy as np
import pytest

from allocation.hyperx import MachineShape
from allocation.hyperx.fragmentation import whole_free_switches
from recommendations.calibration import synthetic_occupancy
from recommendations.calibration.occupancy import aged_occupancy, slurm_best_fit

SHAPES = (MachineShape((8, 8), 8), MachineShape((16, 16), 16), MachineShape((4, 4, 4), 4))


def test_best_fit_takes_the_tightest_run_that_fits_then_the_largest_runs():
    free = np.zeros(40, dtype=bool)
    for start, length in ((0, 5), (10, 3), (20, 8), (30, 4)):
        free[start:start + length] = True
    assert slurm_best_fit(free, 4).tolist() == [30, 31, 32, 33]  # 4 fits exactly
    assert slurm_best_fit(free, 2).tolist() == [10, 11]  # the run of 3, not of 5
    assert slurm_best_fit(free, 10).tolist() == [*range(20, 28), 10, 11]  # 8, then best fit
    with pytest.raises(ValueError, match="need 21"):
        slurm_best_fit(free, 21)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.label)
@pytest.mark.parametrize("load", [0.25, 0.5, 0.75])
def test_the_aged_machine_holds_the_load_exactly_and_is_deterministic(shape, load):
    held = synthetic_occupancy(shape, load)
    assert held.size == round(load * shape.node_count)
    assert np.array_equal(held, np.unique(held))
    assert np.array_equal(held, synthetic_occupancy(shape, load))
    assert not np.array_equal(held, aged_occupancy(shape, held.size, seed=1))  # the seed


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.label)
def test_the_aged_machine_has_holes_and_shared_switches(shape):
    """Filled once from empty, the held endpoints would be one run from node 0; aged,
    they are many runs, some switches hold other jobs' endpoints and free ones, and
    whole free switches remain for switch-local jobs."""
    held = synthetic_occupancy(shape, 0.5)
    taken = np.zeros(shape.node_count, dtype=bool)
    taken[held] = True
    runs = int(np.count_nonzero(np.diff(taken.astype(np.int8)) == 1)) + int(taken[0])
    per_switch = taken.reshape(-1, shape.concentration).sum(axis=1)
    assert runs >= 3
    assert np.count_nonzero((per_switch > 0) & (per_switch < shape.concentration)) >= 1
    assert whole_free_switches(~taken, shape.concentration) >= 1


def test_an_empty_load_is_an_empty_machine():
    assert synthetic_occupancy(SHAPES[0], 0.0).size == 0
    assert aged_occupancy(SHAPES[0], 0, seed=3).size == 0
