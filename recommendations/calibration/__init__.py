"""Pure calibration core (no Django): which simulations calibrate a machine shape,
the synthetic occupancies they run on (:mod:`.occupancy`), and the table that
answers a recommendation from them by interpolation.

A live prediction simulates the job on the real occupancy, which is exact but
costs time that grows with the machine (a 512-node all-to-all on a half-full
16x16, c = 16 machine is about a minute per policy and seed on one core). A
calibration simulates, beforehand and once per machine shape, engine version and
occupancy model, the same kind of prediction over a grid of job sizes, patterns,
machine loads and policies; a recommendation on that shape then ranks the policies
from the grid in milliseconds. :mod:`.grid` says what is simulated, :mod:`.table` how it answers.
"""

from .grid import (
    OCCUPANCY_DESCRIPTIONS,
    OCCUPANCY_MODEL,
    CalibrationGrid,
    CalibrationPoint,
    calibrated_with_locality,
    calibration_line_exposure,
    default_grid,
    grid_points,
    line_exposure,
    point_partitions,
    synthetic_occupancy,
)
from .table import CalibrationTable, Coverage, build_table

__all__ = [
    "OCCUPANCY_DESCRIPTIONS",
    "OCCUPANCY_MODEL",
    "CalibrationGrid",
    "CalibrationPoint",
    "CalibrationTable",
    "Coverage",
    "build_table",
    "calibrated_with_locality",
    "calibration_line_exposure",
    "default_grid",
    "grid_points",
    "line_exposure",
    "point_partitions",
    "synthetic_occupancy",
]
