"""What a placement leaves behind: whole free switches it breaks.

A job placed on whole switches leaves the other free switches whole, so a later
job can still get switch locality (docs/domain.md section 3); a scattered
placement takes a few endpoints from many switches and leaves none whole. The
simulation of one job cannot see this cost, which falls on the jobs after it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["broken_switches", "whole_free_switches"]


def whole_free_switches(available: np.ndarray, concentration: int) -> int:
    """Number of switches whose endpoints are all available.

    Examples
    --------
    >>> whole_free_switches(np.array([1, 1, 1, 0, 0, 0], dtype=bool), 2)
    1
    """
    per_switch = np.asarray(available, dtype=bool).reshape(-1, concentration)
    return int(np.count_nonzero(per_switch.all(axis=1)))


def broken_switches(available: np.ndarray, endpoints: np.ndarray, concentration: int) -> int:
    """Whole free switches that placing ``endpoints`` leaves partly used.

    A switch the placement fills completely is not broken: it was used
    whole.

    Examples
    --------
    >>> free = np.ones(8, dtype=bool)   # 4 switches of 2 endpoints, all free
    >>> broken_switches(free, np.array([0, 1, 2, 3]), 2)   # two whole switches
    0
    >>> broken_switches(free, np.array([0, 2, 4, 6]), 2)   # one endpoint of each
    4
    """
    available = np.asarray(available, dtype=bool)
    after = available.copy()
    after[np.asarray(endpoints, dtype=np.int64)] = False
    before_whole = available.reshape(-1, concentration).all(axis=1)
    after_free = after.reshape(-1, concentration)
    partly_used = after_free.any(axis=1) & ~after_free.all(axis=1)
    return int(np.count_nonzero(before_whole & partly_used))
