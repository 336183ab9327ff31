"""Machines that a scheduler has run for a while: the occupancy a calibration may run on.

A machine fresh from a reboot, filled job after job, holds its jobs in contiguous
blocks; one that Slurm has scheduled for days does not: jobs end in any order, and
each new job fills the holes they leave. :func:`aged_occupancy` plays that out with
Slurm's own node selection when no topology plugin is configured
(:func:`slurm_best_fit`), so the machine's other jobs are fragmented the way a real
one's are, not the way any of this project's policies would place them.
"""

from __future__ import annotations

import numpy as np

from allocation.hyperx import MachineShape
from allocation.hyperx.job_sizes import lublin_sizes

__all__ = ["aged_occupancy", "slurm_best_fit"]

#: Jobs that end before the snapshot, per job the machine holds: enough that hardly
#: any job of the first filling is left (each ends with chance 1/jobs a departure).
CHURN_PER_JOB = 8
#: At least this many departures, however few jobs the load holds.
MIN_CHURN = 100


def _free_runs(free: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(start, length) of every maximal run of consecutive free endpoints."""
    edges = np.diff(np.concatenate(([0], free.astype(np.int8), [0])))
    starts = np.nonzero(edges == 1)[0]
    return starts, np.nonzero(edges == -1)[0] - starts


def slurm_best_fit(free: np.ndarray, size: int) -> np.ndarray:
    """The ``size`` endpoints Slurm's node selection gives a job on equal-weight nodes
    without a topology plugin (``select/cons_tres``, ``_eval_nodes``): of the sets of
    consecutive free nodes, the smallest that is large enough, from its first node;
    when none is, the largest set whole (the first of equal ones) and again for the
    rest. Endpoint ids are node order (``hx001``, ``hx002``, ... switch by switch).

    >>> free = np.array([1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1], dtype=bool)
    >>> slurm_best_fit(free, 3).tolist()  # the run of 3, not the first or the longest
    [3, 4, 5]
    >>> slurm_best_fit(free, 6).tolist()  # none fits: the longest, then the best fit
    [7, 8, 9, 10, 0, 1]
    """
    starts, lengths = _free_runs(free)
    if int(lengths.sum()) < size:
        raise ValueError(f"need {size} free endpoints, {int(lengths.sum())} free")
    taken, left = [], size
    usable = np.ones(starts.size, dtype=bool)
    while left > 0:
        fits = usable & (lengths >= left)
        if fits.any():
            pick = int(np.flatnonzero(fits)[np.argmin(lengths[fits])])
            taken.append(np.arange(starts[pick], starts[pick] + left))
            break
        pick = int(np.argmax(np.where(usable, lengths, -1)))
        taken.append(np.arange(starts[pick], starts[pick] + lengths[pick]))
        left -= int(lengths[pick])
        usable[pick] = False
    return np.concatenate(taken).astype(np.int64)


class _Sizes:
    """Job sizes from :func:`lublin_sizes` on a machine of an eighth of the shape's nodes
    (other jobs each hold at most that much, as the contiguous occupancy's do), drawn
    in blocks."""

    def __init__(self, shape: MachineShape, rng: np.random.Generator) -> None:
        self.top, self.rng, self.block, self.at = max(1, shape.node_count // 8), rng, [], 0

    def next(self) -> int:
        if self.at == len(self.block):
            self.block, self.at = lublin_sizes(self.rng, 256, self.top).tolist(), 0
        self.at += 1
        return self.block[self.at - 1]


def aged_occupancy(shape: MachineShape, want: int, seed: int) -> np.ndarray:
    """Endpoints ``want`` of other jobs hold on a machine Slurm has scheduled a while
    (a sorted int64 array). Jobs sized as on real machines (:class:`_Sizes`) arrive
    while fewer than ``want`` endpoints are held, and a job drawn at random ends while
    as many or more are (lifetimes without memory end any running job alike), each
    placed by :func:`slurm_best_fit`; once :data:`CHURN_PER_JOB` departures per job
    held have passed, jobs end or a last one is cut until exactly ``want`` are held.
    Deterministic in ``seed``.

    >>> held = aged_occupancy(MachineShape((4, 4), 4), 32, seed=1)
    >>> held.size, bool((np.diff(held) > 0).all())
    (32, True)
    """
    free = np.ones(shape.node_count, dtype=bool)
    if want <= 0:
        return np.zeros(0, dtype=np.int64)
    rng = np.random.default_rng(seed)
    sizes = _Sizes(shape, rng)
    jobs: list[np.ndarray] = []
    held = departures = 0

    def arrive(cap: int) -> None:
        nonlocal held
        job = slurm_best_fit(free, min(sizes.next(), cap))
        free[job] = False
        jobs.append(job)
        held += job.size

    def depart() -> None:
        nonlocal held, departures
        job = jobs.pop(int(rng.integers(len(jobs))))
        free[job] = True
        held -= job.size
        departures += 1

    while departures < max(MIN_CHURN, CHURN_PER_JOB * len(jobs)):
        if held < want:
            arrive(shape.node_count - held)
        else:
            depart()
    while held > want:
        depart()
    while held < want:
        arrive(want - held)
    return np.nonzero(~free)[0].astype(np.int64)
