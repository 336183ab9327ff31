"""What a calibration simulates: a grid of (pattern, job size, machine load,
policy, seed) points, each on a synthetic occupancy of the machine shape.

The occupancy at load ``u`` is other jobs holding ``round(u * nodes)`` endpoints on
a machine Slurm has scheduled for a while (:func:`.occupancy.aged_occupancy`: jobs
sized as real machines' jobs are, arriving and ending in turn, each placed by
Slurm's best fit over runs of consecutive free nodes), so their holes are spread
the way a busy machine's are: the background a live prediction sees (its held
endpoints send permutation traffic). The job is then placed by each policy on what
is left, exactly as a live recommendation proposes it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from allocation.hyperx import (
    ONLINE_POLICIES,
    AllocationError,
    HyperX,
    MachineShape,
    allocate,
)
from allocation.hyperx.patterns import (
    ALL2ALL,
    ALLREDUCE,
    RANDOM_INVOLUTION,
    STENCIL4,
    STENCIL8,
    UNIFORM,
)

from .occupancy import aged_occupancy

__all__ = ["OCCUPANCY_DESCRIPTIONS", "OCCUPANCY_MODEL", "CalibrationGrid", "CalibrationPoint",
           "calibration_line_exposure", "default_grid", "grid_points", "line_exposure",
           "point_partitions", "synthetic_occupancy"]

#: The machine the points run on, stored with each calibration: a calibration made on
#: another (``contiguous``, before 2026-12-04: other jobs in blocks filled one after
#: another) is not read, and its shape is calibrated again.
OCCUPANCY_MODEL = "aged"
#: What each occupancy model was, in words (pages show a calibration's).
OCCUPANCY_DESCRIPTIONS = {
    "aged": "other jobs as on a machine Slurm has scheduled a while (sizes as real "
            "machines' jobs, arriving and ending in turn, placed by Slurm's best fit)",
    "contiguous": "other jobs in blocks filled one after another (before 2026-12-04; "
                  "no longer read: its shape is calibrated again on today's model)",
}
#: Seed of the aged machine: every calibration of a shape sees the same one.
OCCUPANCY_SEED = 20261201

#: Patterns in the order they are calibrated (a partial calibration answers the
#: first ones first): the all-to-all, the most common and costly, leads.
PATTERNS = (ALL2ALL, UNIFORM, ALLREDUCE, STENCIL4, STENCIL8, RANDOM_INVOLUTION)
#: Machine loads (fraction of endpoints other jobs hold) of the study's scenarios.
LOADS = (0.0, 0.5, 0.75)
#: Seeds per point: the placement of random policies and the engine's draws.
SEEDS = (0, 1)
#: Job sizes grow by this factor between grid points (interpolated in log size).
SIZE_FACTOR = 4
#: Smallest job size calibrated (smaller jobs read this size's row).
MIN_SIZE = 16
#: Largest job a kernel runs (the all-to-all's rank limit).
MAX_SIZE = 4096


@dataclass(frozen=True)
class CalibrationGrid:
    """The axes of one calibration (each a sorted tuple)."""

    patterns: tuple[str, ...] = PATTERNS
    sizes: tuple[int, ...] = ()
    loads: tuple[float, ...] = LOADS
    policies: tuple[str, ...] = ONLINE_POLICIES
    seeds: tuple[int, ...] = SEEDS

    def as_dict(self) -> dict:
        return {"patterns": list(self.patterns), "sizes": list(self.sizes),
                "loads": list(self.loads), "policies": list(self.policies),
                "seeds": list(self.seeds)}

    @classmethod
    def from_dict(cls, data: dict) -> CalibrationGrid:
        return cls(patterns=tuple(data["patterns"]), sizes=tuple(int(s) for s in data["sizes"]),
                   loads=tuple(float(u) for u in data["loads"]),
                   policies=tuple(data["policies"]), seeds=tuple(int(s) for s in data["seeds"]))


@dataclass(frozen=True)
class CalibrationPoint:
    """One simulation of a calibration."""

    pattern: str
    node_count: int
    load: float
    policy: str
    seed: int

    def as_dict(self) -> dict:
        return {"pattern": self.pattern, "node_count": self.node_count, "load": self.load,
                "policy": self.policy, "seed": self.seed}


def default_sizes(shape: MachineShape) -> tuple[int, ...]:
    """Powers of :data:`SIZE_FACTOR` from :data:`MIN_SIZE` up to half the machine (and
    half the machine itself when it falls between), never above :data:`MAX_SIZE`.

    >>> default_sizes(MachineShape((8, 8), 8)), default_sizes(MachineShape((16, 16), 16))
    ((16, 64, 256), (16, 64, 256, 1024, 2048))
    """
    top = min(shape.node_count // 2, MAX_SIZE)
    sizes, n = [], MIN_SIZE
    while n <= top:
        sizes.append(n)
        n *= SIZE_FACTOR
    if sizes and sizes[-1] < top:
        sizes.append(top)
    return tuple(sizes) or (max(2, top),)


def default_grid(shape: MachineShape, **axes) -> CalibrationGrid:
    """The grid for ``shape``; any axis can be given instead of its default."""
    return CalibrationGrid(**{"sizes": default_sizes(shape), **axes})


def grid_points(grid: CalibrationGrid, shape: MachineShape) -> list[CalibrationPoint]:
    """Every point that fits the machine (a job larger than the free part at a load is
    left out), pattern by pattern in calibration order, cheap loads and sizes first."""
    points = []
    for pattern in grid.patterns:
        for load in grid.loads:
            free = shape.node_count - held_count(shape, load)
            for size in grid.sizes:
                if size > free:
                    continue
                points += [CalibrationPoint(pattern, size, load, policy, seed)
                           for seed in grid.seeds for policy in grid.policies]
    return points


def held_count(shape: MachineShape, load: float) -> int:
    return round(load * shape.node_count)


def synthetic_occupancy(shape: MachineShape, load: float) -> np.ndarray:
    """Endpoints other jobs hold at ``load`` (a sorted int64 array; see the module
    docstring). Deterministic: every calibration of the shape sees the same machine.

    >>> synthetic_occupancy(MachineShape((4, 4), 4), 0.5).size
    32
    """
    return aged_occupancy(shape, held_count(shape, load), OCCUPANCY_SEED)


def whole_free_switches(shape: MachineShape, held: np.ndarray) -> int:
    """Switches none of whose endpoints are in ``held``."""
    taken = np.zeros(shape.node_count, dtype=bool)
    taken[held] = True
    return int((~taken.reshape(-1, shape.concentration).any(axis=1)).sum())


def calibrated_with_locality(shape: MachineShape, load: float, node_count: int) -> bool:
    """Whether the calibration's occupancy at ``load`` leaves a job of ``node_count``
    enough whole free switches that its switch-local policies place it on whole
    switches (switch locality). A live machine whose other jobs are scattered may leave
    none, and then the calibrated cycles describe placements it cannot give.

    >>> calibrated_with_locality(MachineShape((4, 4), 4), 0.5, 8)
    True
    >>> calibrated_with_locality(MachineShape((4, 4), 4), 0.5, 6)  # a switch shared
    False
    """
    if node_count % shape.concentration:
        return False
    needed = node_count // shape.concentration
    return whole_free_switches(shape, synthetic_occupancy(shape, load)) >= needed


def line_exposure(shape: MachineShape, job: np.ndarray, held: np.ndarray) -> int:
    """Endpoints of ``held`` on the switches that lie on a line (every coordinate but one
    equal) through two or more of the job's switches, the job's own switches excepted.

    Omni-WAR deroutes the job's traffic between two switches of such a line through
    the line's other switches, so other jobs' traffic there slows the job; the
    calibration's occupancy may leave a free line empty where a live machine does
    not (docs/operations.md, "What the agreement means").

    >>> shape = MachineShape((4, 4), 2)
    >>> line_exposure(shape, np.arange(4), np.array([4, 5, 6, 8]))  # switches 0, 1: row 0
    3
    """
    coords = shape.switch_coords()
    mine = np.unique(np.asarray(job, dtype=np.int64) // shape.concentration)
    on_line = np.zeros(coords.shape[0], dtype=bool)
    for d in range(coords.shape[1]):
        rest = np.delete(coords, d, axis=1)
        lines, count = np.unique(rest[mine], axis=0, return_counts=True)
        for line in lines[count >= 2]:
            on_line |= (rest == line).all(axis=1)
    on_line[mine] = False
    per_switch = np.bincount(np.asarray(held, dtype=np.int64) // shape.concentration,
                             minlength=coords.shape[0])
    return int(per_switch[on_line].sum())


def calibration_line_exposure(shape: MachineShape, load: float, policy: str,
                              node_count: int) -> int | None:
    """:func:`line_exposure` of ``policy``'s placement (seed 0) on the calibration's
    occupancy at ``load``, or None when it cannot place the job there."""
    held = synthetic_occupancy(shape, load)
    free = np.ones(shape.node_count, dtype=bool)
    free[held] = False
    try:
        job = allocate(HyperX(shape.sides, shape.concentration), free, policy, node_count,
                       seed=0, busy=~free)
    except AllocationError:
        return None
    return line_exposure(shape, job, held)


def point_partitions(shape: MachineShape, point: CalibrationPoint, ranks: int,
                     held: np.ndarray | None = None) -> list[np.ndarray] | None:
    """[the job's first ``ranks`` endpoints as ``point.policy`` places them, the held
    endpoints] (the held ones only when there are some), or None when the policy
    cannot place the job there. ``held``: the occupancy, when the caller has it."""
    held = synthetic_occupancy(shape, point.load) if held is None else held
    topology = HyperX(shape.sides, shape.concentration)
    free = np.ones(shape.node_count, dtype=bool)
    free[held] = False
    busy = ~free
    try:
        job = allocate(topology, free, point.policy, point.node_count, seed=point.seed,
                       busy=busy)
    except AllocationError:
        return None
    parts = [np.asarray(job[:ranks], dtype=np.int64)]
    if held.size >= 2:
        parts.append(held)
    return parts
