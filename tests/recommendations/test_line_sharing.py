"""The line-sharing caveat of a calibrated answer.

The calibration holds other jobs in contiguous blocks, so the row it gives a Row
job is empty; on a live machine the same kind of row may hold other jobs, whose
traffic shares the switches Omni-WAR deroutes the job through (docs/operations.md,
"What the agreement means": the 16x16, 64 nodes at 50 % case). A calibrated answer
whose first choice is placed so says so.
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
    """Half the endpoints held: rows 0-2, and half of rows 4 and 5 (switches 36-39 and
    40-43), so the best-fitting row for four whole switches is row 4, shared."""
    return np.concatenate([np.arange(0, 192), _switches(36, 37, 38, 39, 40, 41, 42, 43)])


def _candidates(held: np.ndarray, n: int = 32) -> list[dict]:
    free = np.ones(SHAPE.node_count, dtype=bool)
    free[held] = False
    topology = HyperX(SHAPE.sides, SHAPE.concentration)
    return [{"policy": p, "endpoints": allocate(topology, free, p, n, seed=0,
                                                busy=~free).tolist()}
            for p in ("row", "diagonal")]


def test_exposure_counts_other_jobs_on_the_lines_between_the_jobs_switches() -> None:
    held = _shared_row_machine()
    row = _candidates(held)[0]["endpoints"]
    assert sorted({e // 8 for e in row}) == [32, 33, 34, 35]
    assert line_exposure(SHAPE, np.asarray(row), held) == 32  # switches 36-39 of row 4
    # a transversal has no line through two of its switches
    assert line_exposure(SHAPE, np.asarray(_candidates(held)[1]["endpoints"]), held) == 0
    # on the calibration's occupancy the Row job's row is empty
    assert calibration_line_exposure(SHAPE, 0.5, "row", 32) == 0
    assert line_exposure(SHAPE, np.asarray(row), synthetic_occupancy(SHAPE, 0.5)) == 0


def test_a_calibrated_first_choice_on_a_shared_row_is_flagged() -> None:
    held = _shared_row_machine()
    note = line_sharing_caveat(MACHINE, _candidates(held), held.tolist(), 0.5, 32,
                               {"row": 16_000.0, "diagonal": 16_100.0})
    assert note == ("; its first choice, row, shares the lines between its switches with 32 "
                    "endpoints of other jobs here, 0 on the calibration's machine: its "
                    "calibrated time may be far too low")


def test_no_caveat_when_the_first_choice_is_placed_as_in_the_calibration() -> None:
    held = _shared_row_machine()
    cycles = {"row": 16_100.0, "diagonal": 16_000.0}  # Diagonal first: no shared line
    assert line_sharing_caveat(MACHINE, _candidates(held), held.tolist(), 0.5, 32, cycles) == ""
    synthetic = synthetic_occupancy(SHAPE, 0.5)  # the calibration's own machine
    assert line_sharing_caveat(MACHINE, _candidates(synthetic), synthetic.tolist(), 0.5, 32,
                               {"row": 16_000.0, "diagonal": 16_100.0}) == ""
