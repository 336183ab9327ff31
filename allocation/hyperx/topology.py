"""HyperX topology: switches, endpoints, distances, links and minimal paths.

A q-dimensional HyperX of sides ``(n_0, ..., n_{q-1})`` has one switch per
coordinate vector; two switches are linked when their coordinates differ in
exactly one dimension (a Hamming graph). Each switch hosts ``concentration``
endpoints.

Conventions used throughout :mod:`allocation.hyperx`:

* ``switch_index = np.ravel_multi_index(coords, sides)`` (C order), so in 2D
  coordinate 0 is the row ``sy`` and coordinate 1 the column ``sx``;
* ``endpoint = switch_index * concentration + local`` with
  ``0 <= local < concentration``.

Everything is vectorised with numpy: a 16x16x16 machine with c = 16
(65,536 endpoints) is cheap to describe.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .shape import MachineShape

__all__ = ["HyperX"]


@lru_cache(maxsize=32)
def _links(sides: tuple[int, ...]) -> np.ndarray:
    coords = MachineShape(sides, 1).switch_coords()
    n_sw = coords.shape[0]
    strides = np.array(
        [int(np.prod(sides[d + 1:])) for d in range(len(sides))], dtype=np.int64
    )
    parts = []
    idx = np.arange(n_sw, dtype=np.int64)
    for d, n_d in enumerate(sides):
        if n_d < 2:
            continue
        # every switch a, every value v > a_d in dimension d.
        vals = np.arange(n_d, dtype=np.int64)
        delta = vals[None, :] - coords[:, d : d + 1]  # (n_sw, n_d)
        mask = delta > 0
        a = np.broadcast_to(idx[:, None], delta.shape)[mask]
        b = a + delta[mask] * strides[d]
        parts.append(np.stack([a, b], axis=1))
    if not parts:
        out = np.zeros((0, 2), dtype=np.int64)
    else:
        out = np.concatenate(parts)
        out = out[np.lexsort((out[:, 1], out[:, 0]))]
    out.setflags(write=False)
    return out


@dataclass(frozen=True)
class HyperX(MachineShape):
    """A HyperX network (Hamming graph of switches) with ``concentration``
    endpoints per switch: a :class:`MachineShape` (sizes, checks, coordinate
    maps) with its links, distances and minimal paths.

    Parameters
    ----------
    sides : tuple of int
        Number of switches along each dimension (q = len(sides) >= 1).
    concentration : int
        Endpoints per switch (c).

    Examples
    --------
    >>> hx = HyperX((8, 8), 8)
    >>> hx.dimensions, hx.n_switches, hx.n_endpoints, hx.n_links
    (2, 64, 512, 448)
    >>> hx.switch_distance(0, 9)
    2
    >>> hx.minimal_paths(0, 9)
    [(0, 8, 9), (0, 1, 9)]
    """
    # The sizes under the names the allocation core has always used.
    @property
    def n_switches(self) -> int:
        """Number of switches (:attr:`MachineShape.switch_count`)."""
        return self.switch_count

    @property
    def n_endpoints(self) -> int:
        """Number of endpoints (:attr:`MachineShape.node_count`)."""
        return self.node_count

    @property
    def n_links(self) -> int:
        """Number of undirected switch-to-switch links."""
        n = self.n_switches
        return int(sum(n * (s - 1) for s in self.sides) // 2)

    # -------------------------------------------------------------- distances
    def switch_distance(self, a, b) -> np.ndarray | int:
        """Hamming distance between switches (vectorised, broadcasting).

        >>> HyperX((4, 4, 4), 1).switch_distance([0, 0], [5, 63]).tolist()
        [2, 3]
        """
        coords = self.switch_coords()
        a_arr = np.asarray(a, dtype=np.int64)
        b_arr = np.asarray(b, dtype=np.int64)
        dist = (coords[a_arr] != coords[b_arr]).sum(axis=-1)
        if dist.ndim == 0:
            return int(dist)
        return dist.astype(np.int64)

    def distance_matrix(self, switches) -> np.ndarray:
        """Pairwise Hamming distances among a subset of switches, (m, m)."""
        sub = self.switch_coords()[np.asarray(switches, dtype=np.int64)]
        out = np.zeros((sub.shape[0], sub.shape[0]), dtype=np.int64)
        for d in range(self.dimensions):
            out += sub[:, None, d] != sub[None, :, d]
        return out

    # ------------------------------------------------------------------ links
    def links(self) -> np.ndarray:
        """Undirected links as (L, 2) switch pairs with a < b, sorted (cached).

        >>> HyperX((3,), 1).links().tolist()
        [[0, 1], [0, 2], [1, 2]]
        """
        return _links(self.sides)

    def minimal_paths(self, a: int, b: int) -> list[tuple[int, ...]]:
        """All minimal paths from switch a to switch b (k! of them when the
        switches differ in k dimensions), as tuples of switch indices
        including both ends; one per order of fixing the differing dimensions.

        >>> HyperX((4, 4), 1).minimal_paths(0, 0)
        [(0,)]
        """
        coords = self.switch_coords()
        ca, cb = coords[int(a)], coords[int(b)]
        diff = [d for d in range(self.dimensions) if ca[d] != cb[d]]
        paths = []
        for order in itertools.permutations(diff):
            cur = ca.copy()
            path = [int(a)]
            for d in order:
                cur[d] = cb[d]
                path.append(int(np.ravel_multi_index(tuple(cur), self.sides)))
            paths.append(tuple(path))
        return paths
