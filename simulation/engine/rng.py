"""A tiny seeded generator usable inside numba code (xorshift64*).

Each simulation owns its state (a one-element ``uint64`` array), so runs are
reproducible and independent of numpy's or numba's global generators.

Examples
--------
>>> import numpy as np
>>> s = new_state(7)
>>> a = [rand_int(s, 10) for _ in range(5)]
>>> s = new_state(7)
>>> a == [rand_int(s, 10) for _ in range(5)]
True
"""

from __future__ import annotations

import numpy as np

from .loop import rand_float, rand_int, rand_u64

__all__ = ["new_state", "rand_float", "rand_int", "rand_u64"]



def new_state(seed: int) -> np.ndarray:
    """Generator state derived from ``seed`` (never zero)."""
    ss = np.random.SeedSequence(int(seed)).generate_state(2, dtype=np.uint64)
    val = int(ss[0]) | 1
    return np.array([val], dtype=np.uint64)
