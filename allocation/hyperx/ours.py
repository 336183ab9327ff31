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
(whole free switches, a transversal while possible: PB 2 and switch locality
on a 2D machine) but scans candidate switches from the quietest to the
busiest, where a switch's load is the number of endpoints held by other jobs
on the lines through it. On an empty machine every switch is equally quiet and
the result is exactly Diagonal's.

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
>>> sorted(set(hx.switch_of(quiet).tolist()))    # only one switch in a loaded row
[3, 9, 14]
"""

from __future__ import annotations

import numpy as np

from ._kernels import transversal_rounds
from .topology import HyperX

OWN_POLICIES: tuple[str, ...] = ("least_loaded_diagonal",)


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


def least_loaded_diagonal(topology: HyperX, free: np.ndarray, full: np.ndarray,
                          busy: np.ndarray, size: int) -> np.ndarray:
    """Switch ids in pick order; the caller takes their free endpoints."""
    coords = topology.switch_coords()
    smax = max(topology.sides)
    load = line_load(topology, busy)
    ids = np.arange(topology.n_switches, dtype=np.int64)
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
