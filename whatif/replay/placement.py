"""The placement factor of a job's communication: how much slower its messages
are on the replayed partition than on a compact one of whole switches.

Analytic (labelled so in every result): ``max(1, 1 / PB) * (1 + LOCALITY_PENALTY
* u)`` when the partition lacks switch locality, else ``max(1, 1 / PB)``; PB is
the partition-bandwidth bound ``2 L / (|P| D_P)`` of :mod:`allocation.hyperx`
and ``u`` the fraction of the machine other jobs hold. It is the recommendations'
analytic factor (same penalty), computed from the bound so that a replay of
100,000 jobs stays fast. The recorded run time is taken as measured on a
compact partition (factor 1): an SWF or ``sacct`` log does not say where a job
ran.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from allocation.hyperx import HyperX
from allocation.hyperx.properties import hull_links, switch_average_distance

__all__ = ["LOCALITY_PENALTY", "analytic_factor", "has_switch_locality"]

#: Slowdown per unit of held machine for a partition without switch locality
#: (the value of ``recommendations.constants.LOCALITY_PENALTY``; a test keeps
#: the two equal).
LOCALITY_PENALTY = 0.5


def has_switch_locality(topology: HyperX, endpoints: np.ndarray) -> bool:
    """Every switch the job uses is entirely its own.

    >>> hx = HyperX((4, 4), 4)
    >>> has_switch_locality(hx, np.arange(8)), has_switch_locality(hx, np.arange(2, 10))
    (True, False)
    """
    counts = np.bincount(np.asarray(endpoints) // topology.concentration)
    used = counts[counts > 0]
    return bool(np.all(used == topology.concentration))


@lru_cache(maxsize=100_000)
def _hull_size(topology: HyperX, switches: tuple[int, ...]) -> int:
    """Links on minimal paths inside the switch set (cached: placements repeat)."""
    return int(hull_links(topology, np.array(switches, dtype=np.int64)).shape[0])


def _inner_links(topology: HyperX, switches: np.ndarray) -> int:
    """Links with both ends in the set: each is its own minimal path, so the hull
    holds at least these (a cheap lower bound of its size)."""
    sides = topology.sides
    coords = topology.switch_coords()[switches]
    switches = np.asarray(switches, dtype=np.int64)
    total = 0
    stride = 1
    for d in reversed(range(len(sides))):
        line = switches - coords[:, d] * stride  # the switch with coordinate d set to 0
        k = np.bincount(line)
        total += int((k * (k - 1) // 2).sum())
        stride *= sides[d]
    return total


def _pb_bound(topology: HyperX, endpoints: np.ndarray, switches: np.ndarray,
              weights: np.ndarray) -> float:
    """The bound, or any value >= 1 when the set's own links already give 1 (the
    factor only needs max(1, 1 / PB))."""
    d_avg = switch_average_distance(topology, switches, weights)
    if d_avg <= 1e-12:
        return math.inf
    size = np.asarray(endpoints).size
    inner = 2.0 * _inner_links(topology, switches) / (size * d_avg)
    if inner >= 1.0:
        return inner
    n_hull = _hull_size(topology, tuple(int(s) for s in switches))
    return 2.0 * n_hull / (size * d_avg)


def analytic_factor(topology: HyperX, endpoints: np.ndarray, held_fraction: float) -> float:
    """Relative communication time of a placement (1 on a compact whole-switch one).

    >>> hx = HyperX((8, 8), 8)
    >>> analytic_factor(hx, np.arange(64), 0.0)        # one row of whole switches, PB 1
    1.0
    >>> round(analytic_factor(hx, np.arange(0, 512, 8), 0.5), 3)  # one node per switch
    1.25
    """
    counts = np.bincount(np.asarray(endpoints, dtype=np.int64) // topology.concentration,
                         minlength=topology.n_switches)
    sw = np.flatnonzero(counts)
    w = counts[sw]
    pb = _pb_bound(topology, endpoints, sw, w)
    base = 1.0 if pb >= 1.0 else 1.0 / pb
    if not bool(np.all(w == topology.concentration)):
        base *= 1.0 + LOCALITY_PENALTY * held_fraction
    return float(base)
