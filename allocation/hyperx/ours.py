"""Our own online policy: ``least_loaded_diagonal``.

What the study found: partition bandwidth and switch locality decide, and
Diagonal (whole switches, no two sharing a row or column) was the most robust
choice with shared virtual channels. What it does not use is the live
occupancy: Diagonal takes the first free transversal in index order, wherever
other jobs' traffic already runs.

Under minimal routing a message between two switches of a partition travels
only on the lines (rows, columns, ...) through those switches. So a switch
whose lines carry many endpoints of *other* running jobs shares its links
with their traffic. ``least_loaded_diagonal`` keeps Diagonal's character
(whole free switches, complete transversals while possible: PB 2 and switch
locality on a 2D machine) and, among all transversals, takes the one whose
switches carry the least load, a switch's load being the number of endpoints
held by other jobs on the lines through it. In 2D that is an exact min-cost
assignment of rows to columns, round after round; for other q a greedy scan
from the quietest switch. On an empty machine the result is exactly
Diagonal's.

>>> import numpy as np
>>> from allocation.hyperx import HyperX, allocate
>>> hx = HyperX((4, 4), 4)
>>> free = np.ones(hx.n_endpoints, dtype=bool)
>>> busy = np.zeros(hx.n_endpoints, dtype=bool)
>>> held = np.r_[0:4, 16:20]                     # another job holds switches 0 and 4
>>> busy[held] = True; free[held] = False
>>> plain = allocate(hx, free, "diagonal", 12)
>>> sorted(set(hx.switch_of(plain).tolist()))    # rows 0 and 1 share links with it
[1, 6, 8]
>>> quiet = allocate(hx, free, "least_loaded_diagonal", 12, busy=busy)
>>> sorted(set(hx.switch_of(quiet).tolist()))    # one switch in a loaded line, not 3
[5, 10, 15]
"""

from __future__ import annotations

import numpy as np

from ._kernels import transversal_rounds
from .online import Placement, take
from .topology import HyperX

_BLOCKED = 1e12


def line_load(topology: HyperX, busy: np.ndarray) -> np.ndarray:
    """Per switch: busy endpoints on the lines through it (itself excluded), summed
    over dimensions."""
    sides = topology.sides
    per_switch = busy.reshape(topology.n_switches, topology.concentration).sum(axis=1)
    grid = per_switch.reshape(sides).astype(np.int64)
    load = np.zeros_like(grid)
    for d in range(len(sides)):
        load += grid.sum(axis=d, keepdims=True) - grid
    return load.reshape(-1)


def _quiet_transversal(cost: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Exactly ``k`` (row, column) pairs, no row or column twice, of least total cost.

    A size-``k`` matching is a perfect matching of the matrix padded with free
    "unused" columns for the rows and "unused" rows for the columns (but never
    unused with unused), solved by scipy's Hungarian ``linear_sum_assignment``.
    """
    from scipy.optimize import linear_sum_assignment  # loaded on first use: see bandwidth.py

    n0, n1 = cost.shape
    padded = np.zeros((n0 + n1 - k, n0 + n1 - k))
    padded[:n0, :n1] = cost
    padded[n0:, n1:] = _BLOCKED
    rows, cols = linear_sum_assignment(padded)
    real = (rows < n0) & (cols < n1)
    return rows[real], cols[real]


def _quiet_transversals(sides: tuple[int, ...], full: np.ndarray, load: np.ndarray,
                        k: int) -> np.ndarray:
    """2D: ``k`` fully free switches as rounds of transversals (no two in a row or
    column), each round the least loaded one."""
    n0, n1 = sides
    usable = full.copy()
    chosen: list[int] = []
    while len(chosen) < k:
        cost = np.where(usable, load, _BLOCKED).reshape(n0, n1).astype(np.float64)
        rows, cols = _quiet_transversal(cost, min(k - len(chosen), n0, n1))
        ok = cost[rows, cols] < _BLOCKED
        picks = (rows * n1 + cols)[ok]
        if picks.size == 0:
            break
        picks = picks[np.lexsort((picks, load[picks]))]
        chosen.extend(int(p) for p in picks)
        usable[picks] = False
    return np.asarray(chosen, dtype=np.int64)


def least_loaded_diagonal(topology: HyperX, free: np.ndarray, full: np.ndarray,
                          busy: np.ndarray, size: int) -> np.ndarray:
    """Switch ids in pick order; the caller takes their free endpoints."""
    coords = topology.switch_coords()
    smax = max(topology.sides)
    load = line_load(topology, busy)
    ids = np.arange(topology.n_switches, dtype=np.int64)
    c = topology.concentration
    if topology.dimensions == 2 and load.any():
        picks = _quiet_transversals(topology.sides, full, load, -(-size // c))
    else:  # nothing else runs (or q != 2): greedy transversals, quietest first
        full_ids = ids[full]
        full_ids = full_ids[np.lexsort((full_ids, load[full_ids]))]
        picks = transversal_rounds(coords, full_ids, free, size, smax)
    got = int(free[picks].sum())
    if got < size:
        part = ids[(free > 0) & ~full]
        part = part[np.lexsort((part, load[part], -free[part]))]
        picks = np.concatenate([picks, transversal_rounds(coords, part, free, size - got,
                                                          smax)])
    return picks


def place_least_loaded_diagonal(ctx: Placement, size: int, seed: int) -> np.ndarray:
    """The online form the policy registry calls (deterministic: ``seed`` unused)."""
    return take(ctx, least_loaded_diagonal(ctx.hx, ctx.free, ctx.full, ctx.held, size), size)
