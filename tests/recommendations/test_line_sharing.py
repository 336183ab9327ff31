"""The line-sharing caveat of a calibrated answer.

On the calibration's machine the lines a Row job's switches share hold a few other
jobs' endpoints; on a live machine the same kind of placement may share them with
many more, whose traffic shares the switches Omni-WAR deroutes the job through
(docs/operations.md, "What the agreement means"). A calibrated answer whose first
choice is placed so says so.
"""

from __future__ import annotations

import numpy as np

from allocation.hyperx import HyperX, MachineShape, allocate
from allocation.models import Machine
from recommendations.calibration import (
    calibration_line_exposure,
    line_exposure,
    synthetic_occupancy,
)
from recommendations.services.calibration import line_sharing_caveat

SHAPE = MachineShape((8, 8), 8)
MACHINE = Machine(name="line", sides=[8, 8], concentration=8)


def _switches(*indices: int) -> np.ndarray:
    return np.concatenate([np.arange(s * 8, s * 8 + 8) for s in indices])


def _shared_row_machine() -> np.ndarray:
    """Three quarters of the endpoints held: columns 2-7 of every row, so a job of four
    whole switches takes two in row 0 and two in row 1, each row shared with 48."""
    return _switches(*[8 * row + col for row in range(8) for col in range(2, 8)])


def _candidates(held: np.ndarray, n: int = 32) -> list[dict]:
    free = np.ones(SHAPE.node_count, dtype=bool)
    free[held] = False
    topology = HyperX(SHAPE.sides, SHAPE.concentration)
    return [{"policy": p, "endpoints": allocate(topology, free, p, n, seed=0,
                                                busy=~free).tolist()}
            for p in ("row", "least_loaded_diagonal")]


def test_exposure_counts_other_jobs_on_the_lines_between_the_jobs_switches() -> None:
    held = _shared_row_machine()
    row = _candidates(held)[0]["endpoints"]
    assert sorted({e // 8 for e in row}) == [0, 1, 8, 9]
    assert line_exposure(SHAPE, np.asarray(row), held) == 96  # rows 0 and 1, columns free
    # a transversal has no line through two of its switches
    assert line_exposure(SHAPE, np.asarray(_candidates(held)[1]["endpoints"]), held) == 0
    # on the calibration's (aged) machine the Row job's lines are shared far less
    synthetic = synthetic_occupancy(SHAPE, 0.75)
    calibrated = calibration_line_exposure(SHAPE, 0.75, "row", 32)
    assert 0 < calibrated < 96 // 2
    free = np.ones(SHAPE.node_count, dtype=bool)
    free[synthetic] = False
    job = allocate(HyperX(SHAPE.sides, SHAPE.concentration), free, "row", 32, seed=0,
                   busy=~free)
    assert line_exposure(SHAPE, job, synthetic) == calibrated


def test_a_calibrated_first_choice_on_a_shared_row_is_flagged() -> None:
    held = _shared_row_machine()
    note = line_sharing_caveat(MACHINE, _candidates(held), held.tolist(), 0.75, 32,
                               {"row": 16_000.0, "least_loaded_diagonal": 16_100.0})
    calibrated = calibration_line_exposure(SHAPE, 0.75, "row", 32)
    assert note == ("; its first choice, row, shares the lines between its switches with 96 "
                    f"endpoints of other jobs here, {calibrated} on the calibration's "
                    "machine: its calibrated time may be far too low")


def test_no_caveat_when_the_first_choice_is_placed_as_in_the_calibration() -> None:
    held = _shared_row_machine()
    cycles = {"row": 16_100.0, "least_loaded_diagonal": 16_000.0}  # a transversal first
    assert line_sharing_caveat(MACHINE, _candidates(held), held.tolist(), 0.75, 32, cycles) == ""
    synthetic = synthetic_occupancy(SHAPE, 0.75)  # the calibration's own machine
    assert line_sharing_caveat(MACHINE, _candidates(synthetic), synthetic.tolist(), 0.75, 32,
                               {"row": 16_000.0, "least_loaded_diagonal": 16_100.0}) == ""
