"""The pure calibration core: grid, synthetic occupancy, table and interpolation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from allocation.hyperx import MachineShape
from recommendations.calibration import (
    CalibrationGrid,
    CalibrationPoint,
    CalibrationTable,
    build_table,
    default_grid,
    grid_points,
    point_partitions,
    synthetic_occupancy,
)
from recommendations.calibration.grid import default_sizes
from recommendations.calibration.table import PointResult

REF = MachineShape((8, 8), 8)


def test_default_sizes_grow_by_four_up_to_half_the_machine():
    assert default_sizes(REF) == (16, 64, 256)
    assert default_sizes(MachineShape((16, 16), 16)) == (16, 64, 256, 1024, 2048)
    assert default_sizes(MachineShape((16, 16, 16), 16))[-1] == 4096  # the kernels' limit
    assert default_sizes(MachineShape((2, 2), 2)) == (4,)  # smaller than MIN_SIZE: half


def test_points_leave_out_jobs_larger_than_the_free_part():
    grid = default_grid(REF, patterns=("all2all",), seeds=(0,))
    points = grid_points(grid, REF)
    by_load = {u: {p.node_count for p in points if p.load == u} for u in grid.loads}
    assert by_load == {0.0: {16, 64, 256}, 0.5: {16, 64, 256}, 0.75: {16, 64}}
    assert len(points) == 8 * len(grid.policies)
    assert points[0].pattern == "all2all" and points[0].load == 0.0


@pytest.mark.parametrize("load", [0.0, 0.25, 0.5, 0.75])
def test_synthetic_occupancy_holds_the_load_and_is_deterministic(load):
    held = synthetic_occupancy(REF, load)
    assert held.size == round(load * REF.node_count)
    assert np.array_equal(held, synthetic_occupancy(REF, load))
    assert np.array_equal(held, np.unique(held))


def test_a_point_places_the_job_on_what_is_free():
    held = synthetic_occupancy(REF, 0.5)
    point = CalibrationPoint("all2all", 64, 0.5, "diagonal", 0)
    job, background = point_partitions(REF, point, 64, held)
    assert job.size == 64 and not set(job) & set(held)
    assert np.array_equal(background, held)
    alone = point_partitions(REF, CalibrationPoint("all2all", 64, 0.0, "row", 0), 64)
    assert len(alone) == 1  # no background at load 0
    assert point_partitions(REF, CalibrationPoint("all2all", 300, 0.5, "row", 0), 300,
                            held) is None  # more than is free


def _results(values: dict[tuple[float, int, str], float]) -> list[PointResult]:
    return [PointResult("all2all", n, u, p, c, 1.0 + n / 64) for (u, n, p), c in values.items()]


def test_the_table_answers_grid_points_exactly_and_interpolates_in_log_size():
    table = build_table(_results({(0.5, 16, "row"): 1000, (0.5, 64, "row"): 4000,
                                  (0.5, 16, "diagonal"): 800, (0.5, 64, "diagonal"): 3200}))
    cycles, coverage = table.completion_cycles("all2all", 16, 0.5)
    assert cycles == pytest.approx({"row": 1000, "diagonal": 800}, rel=1e-12)
    assert coverage.sizes == (16, 16) and not coverage.clamped
    cycles, coverage = table.completion_cycles("all2all", 32, 0.5)  # halfway in log2
    assert cycles["row"] == pytest.approx(2000) and cycles["diagonal"] == pytest.approx(1600)
    assert coverage.sizes == (16, 64) and "16-64 nodes" in coverage.describe()


def test_loads_interpolate_linearly_and_outside_the_grid_clamps():
    table = build_table(_results({(0.0, 64, "row"): 1000, (0.5, 64, "row"): 3000}))
    cycles, coverage = table.completion_cycles("all2all", 64, 0.25)
    assert cycles["row"] == pytest.approx(math.sqrt(1000 * 3000))  # linear in log time
    assert coverage.loads == (0.0, 0.5)
    cycles, coverage = table.completion_cycles("all2all", 512, 0.9)
    assert cycles["row"] == pytest.approx(3000) and coverage.clamped
    assert "outside the calibrated range" in coverage.describe()
    assert table.completion_cycles("stencil4", 64, 0.5) is None


def test_seeds_average_and_a_run_that_did_not_complete_leaves_its_cell_out():
    results = [PointResult("all2all", 64, 0.5, "row", 1000, 1.0),
               PointResult("all2all", 64, 0.5, "row", 3000, 3.0),
               PointResult("all2all", 64, 0.5, "diagonal", 900, 1.0),
               PointResult("all2all", 64, 0.5, "diagonal", None, 1.0)]
    table = build_table(results)
    cycles, _ = table.completion_cycles("all2all", 64, 0.5)
    assert cycles == pytest.approx({"row": 2000}, rel=1e-12)
    assert table.run_seconds("all2all", 64, 0.5) == pytest.approx(1.5)
    assert table.point_count() == 1


def test_the_table_round_trips_through_json():
    import json

    table = build_table([*_results({(0.0, 16, "row"): 10, (0.75, 64, "diagonal"): 20}),
                         PointResult("all2all", 16, 0.0, "row", 30, 1.0)])
    again = CalibrationTable.from_dict(json.loads(json.dumps(table.as_dict())))
    assert again.cells == table.cells and again.wall == table.wall
    assert again.spread == table.spread == {"all2all": {0.0: {16: {"row": 1.0}}}}
    # a table stored before seed spreads were kept reads as one without them
    older = {k: v for k, v in table.as_dict().items() if k != "spread"}
    assert CalibrationTable.from_dict(older).seed_spread("all2all", 16, 0.0) == {}


def _seeds(values: dict[tuple[float, int, str], tuple[float, ...]]) -> list[PointResult]:
    return [PointResult("all2all", n, u, p, c, 1.0)
            for (u, n, p), cycles in values.items() for c in cycles]


def test_the_seeds_spread_is_kept_per_cell_and_read_over_the_points_an_answer_uses():
    """(largest - smallest) / mean of a cell's seeds; an answer's spread per policy is the
    largest over the cells it interpolates between, at the bracketing sizes and loads
    only; a cell of one seed, or with a run that did not complete, has none."""
    table = build_table(_seeds({
        (0.5, 16, "row"): (900, 1100), (0.5, 64, "row"): (3000, 5000),
        (0.5, 256, "row"): (1000, 9000), (0.0, 64, "row"): (1000, 1000),
        (0.5, 16, "diagonal"): (800,), (0.5, 64, "diagonal"): (700, 700)})
        + [PointResult("all2all", 64, 0.5, "l_shape", c, 1.0) for c in (100, 300, None)])
    assert table.spread["all2all"][0.5][16] == {"row": pytest.approx(0.2)}  # one-seed diagonal
    assert table.spread["all2all"][0.5][64] == {"row": pytest.approx(0.5), "diagonal": 0.0}
    assert table.seed_spread("all2all", 16, 0.5) == {"row": pytest.approx(0.2)}
    # 32 nodes lies between 16 and 64: row's larger spread (64) counts, 256's does not
    assert table.seed_spread("all2all", 32, 0.5) == {"row": pytest.approx(0.5),
                                                     "diagonal": 0.0}
    assert table.seed_spread("all2all", 128, 0.5)["row"] == pytest.approx(1.6)
    # between loads 0 and 0.5 at 64 nodes: both loads' cells; at load 0 alone, none
    assert table.seed_spread("all2all", 64, 0.25)["row"] == pytest.approx(0.5)
    assert table.seed_spread("all2all", 64, 0.0)["row"] == 0.0
    assert table.seed_spread("stencil4", 64, 0.5) == {}


def test_the_grid_round_trips():
    grid = default_grid(REF, loads=(0.0, 0.5))
    assert CalibrationGrid.from_dict(grid.as_dict()) == grid
