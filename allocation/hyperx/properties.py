"""Partition properties (docs/domain.md section 3).

For a partition P (endpoints) with switch set S:

* **Average distance** ``D_P`` at endpoint level, self pairs included. The
  Hamming distance is a sum of per-dimension indicators, so
  ``D_P = sum_d (1 - sum_v f_{d,v}^2)`` where ``f_{d,v}`` is the fraction of
  P's endpoints whose switch has coordinate v in dimension d: O(|P| q), no
  pair matrix.
* **Max distance** over pairs of switches of S (compiled pair loop that stops
  at q).
* **Convexity.** The minimal paths between a and b visit exactly the
  interval ``I(a, b) = {x : x_i in {a_i, b_i} for all i}``; in a Hamming
  graph the geodesically convex sets are exactly the products
  ``S_0 x ... x S_{q-1}`` of coordinate sets (every subset of a complete graph
  is convex), so S is *convex* iff ``|S| == prod_d |proj_d(S)|``. *Weakly
  convex* (one minimal path inside S for every pair) is checked by a
  compiled dynamic programme over the subsets of differing dimensions.
* **Hull links.** A link {u, v} differing only in dimension d lies on a
  minimal path from a to b iff ``{u_d, v_d} = {a_d, b_d}`` and, for every
  other dimension i, ``u_i = v_i in {a_i, b_i}`` (walk a -> u fixing the
  dimensions where u already agrees with b, cross the link, then v -> b).
  So the link with other coordinates w is in the hull iff there are
  ``a in S`` with ``a_d = u_d`` and ``b in S`` with ``b_d = v_d`` and a split
  of the other dimensions into T (taken from a) and its complement (taken
  from b) with ``w_T in proj_T(A)`` and ``w_{~T} in proj_{~T}(B)``, where A, B
  are the slices of S at ``u_d`` and ``v_d``. This is 2^(q-1) boolean
  any-reductions per dimension, vectorised over all links.
* **PB bound** ``2 L / (|P| D_P)``: with every endpoint injecting lambda
  phits/cycle, uniform over P (self included), the traffic crossing links
  is ``lambda |P| D_P`` link-hops per cycle (minimal routing takes exactly
  the switch distance), and the hull offers ``2 L`` directed links of
  capacity 1. The literal formula (endpoint-level ``D_P``) reproduces the
  study on 8x8 c=8: Row ``2*28/(64*7/8) = 1``, Diagonal
  ``2*112/(64*7/4) = 2``, Full Spread ``2*448/(64*7/4) = 8``, Rectangular
  2x4 ``2*16/(64*5/4) = 0.4``, L-shape ``2*40/(64*5/4) = 1``. A partition
  on one switch has ``D_P = 0`` and uses no link: the bound is ``inf``
  (``None`` in :meth:`PartitionProperties.as_dict`). The exact LP
  (:mod:`bandwidth`) gives 1, 2, 8, 0.25 and 1 for these five: the bound is
  tight except for Rectangular, whose 4 column links (one per direction)
  carry all the traffic between its two rows (4 lambda each).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass

import numpy as np

from ._kernels import all_pairs_weakly_convex, max_pair_distance
from .bandwidth import exact_is_cheap, exact_partition_bandwidth
from .topology import HyperX

__all__ = [
    "PartitionProperties",
    "average_distance",
    "convexity",
    "hull_links",
    "partition_properties",
    "switch_average_distance",
    "switch_counts",
]

CONVEX = "convex"
WEAKLY_CONVEX = "weakly-convex"
NON_CONVEX = "non-convex"


@dataclass(frozen=True)
class PartitionProperties:
    """Properties of one partition; see the module docstring for definitions."""

    size: int
    switches: int
    avg_distance: float
    max_distance: int
    convexity: str
    switch_locality: bool
    hull_links: int
    pb_bound: float
    pb_exact: float | None

    def as_dict(self) -> dict:
        """Plain-Python dict (ints, floats, str, bool, None), strict-JSON safe.

        An infinite bandwidth (all endpoints on one switch: no link is used,
        the network does not limit the partition) becomes None here, because
        strict JSON (DRF, PostgreSQL jsonb) has no Infinity; the dataclass
        fields keep ``math.inf``.

        >>> p = partition_properties(HyperX((4, 4), 4), [0, 1])
        >>> p.pb_bound, p.as_dict()["pb_bound"], p.as_dict()["pb_exact"]
        (inf, None, None)
        """
        out = asdict(self)
        for key in ("pb_bound", "pb_exact"):
            if out[key] is not None and not math.isfinite(out[key]):
                out[key] = None
        return out


def _endpoints(topology: HyperX, endpoints) -> np.ndarray:
    ep = np.asarray(endpoints, dtype=np.int64).reshape(-1)
    if ep.size == 0:
        raise ValueError("a partition needs at least one endpoint")
    if ep.min() < 0 or ep.max() >= topology.n_endpoints:
        raise ValueError(f"endpoint ids must lie in [0, {topology.n_endpoints})")
    if np.unique(ep).size != ep.size:
        raise ValueError("endpoint ids of a partition must be distinct")
    return ep


def switch_counts(topology: HyperX, endpoints) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique switches of the endpoints and their endpoint counts."""
    sw, counts = np.unique(topology.switch_of(endpoints), return_counts=True)
    return sw.astype(np.int64), counts.astype(np.int64)


def average_distance(topology: HyperX, endpoints) -> float:
    """Endpoint-level average switch distance D_P, self pairs included.

    >>> hx = HyperX((8, 8), 8)
    >>> average_distance(hx, range(64))  # one row: 1 - 1/8
    0.875
    """
    sw, w = switch_counts(topology, _endpoints(topology, endpoints))
    return switch_average_distance(topology, sw, w)


def switch_average_distance(topology: HyperX, sw: np.ndarray, w: np.ndarray) -> float:
    """D_P from the partition's switches and its endpoints on each (weights)."""
    coords = topology.switch_coords()[sw]
    total = float(w.sum())
    out = 0.0
    for d, n_d in enumerate(topology.sides):
        f = np.bincount(coords[:, d], weights=w, minlength=n_d) / total
        out += 1.0 - float(np.dot(f, f))
    return max(out, 0.0)


def _strides(sides: tuple[int, ...]) -> np.ndarray:
    return np.array([int(np.prod(sides[d + 1:])) for d in range(len(sides))], dtype=np.int64)


def convexity(topology: HyperX, switches) -> str:
    """"convex", "weakly-convex" or "non-convex" for a set of switches.

    >>> hx = HyperX((8, 8), 8)
    >>> convexity(hx, [0, 1, 8, 9]), convexity(hx, [0, 9, 18]), convexity(hx, [0, 1, 9])
    ('convex', 'non-convex', 'weakly-convex')
    """
    sw = np.unique(np.asarray(switches, dtype=np.int64))
    coords = topology.switch_coords()[sw]
    n_proj = math.prod(int(np.unique(coords[:, d]).size) for d in range(topology.dimensions))
    if n_proj == sw.size:
        return CONVEX
    member = np.zeros(topology.n_switches, dtype=np.bool_)
    member[sw] = True
    ok = all_pairs_weakly_convex(coords, sw, member, _strides(topology.sides))
    return WEAKLY_CONVEX if ok else NON_CONVEX


def _hull_masks(topology: HyperX, switches):
    """Yield (d, mask) with mask[x, y, w...] True when the dimension-d link
    between coordinate values x and y (other coordinates w) is in the hull."""
    ind = np.zeros(topology.sides, dtype=np.bool_)
    coords = topology.switch_coords()[np.asarray(switches, dtype=np.int64)]
    ind[tuple(coords.T)] = True
    q = topology.dimensions
    for d in range(q):
        a = np.moveaxis(ind, d, 0)
        rest = tuple(range(1, q))
        mask = np.zeros((a.shape[0], *a.shape), dtype=np.bool_)
        for r in range(len(rest) + 1):
            for t in itertools.combinations(rest, r):
                comp = tuple(ax for ax in rest if ax not in t)
                from_a = a.any(axis=comp, keepdims=True) if comp else a
                from_b = a.any(axis=t, keepdims=True) if t else a
                mask |= from_a[:, None] & from_b[None, :]
        n_d = a.shape[0]
        upper = np.triu(np.ones((n_d, n_d), dtype=np.bool_), 1)
        mask &= upper.reshape((n_d, n_d) + (1,) * (q - 1))
        yield d, mask


def hull_links(topology: HyperX, switches) -> np.ndarray:
    """Links (a < b pairs, sorted) on some minimal path between two of ``switches``.

    >>> hull_links(HyperX((4, 4), 1), [0, 5]).tolist()
    [[0, 1], [0, 4], [1, 5], [4, 5]]
    """
    sides = topology.sides
    parts = []
    for d, mask in _hull_masks(topology, switches):
        idx = np.nonzero(mask)
        x, y, rest = idx[0], idx[1], idx[2:]
        cu = list(rest)
        cv = list(rest)
        cu.insert(d, x)
        cv.insert(d, y)
        u = np.ravel_multi_index(tuple(cu), sides)
        v = np.ravel_multi_index(tuple(cv), sides)
        parts.append(np.stack([np.minimum(u, v), np.maximum(u, v)], axis=1))
    out = np.concatenate(parts).astype(np.int64) if parts else np.zeros((0, 2), np.int64)
    return out[np.lexsort((out[:, 1], out[:, 0]))]


def _n_hull_links(topology: HyperX, switches) -> int:
    return int(sum(int(mask.sum()) for _, mask in _hull_masks(topology, switches)))


def partition_properties(
    topology: HyperX, endpoints, exact: bool | None = None
) -> PartitionProperties:
    """Compute the properties of partition ``endpoints`` on ``topology``.

    Parameters
    ----------
    topology : HyperX
    endpoints : array_like of int
        Distinct endpoint ids (order irrelevant).
    exact : bool or None
        True: solve the exact partition-bandwidth LP; False: skip it
        (``pb_exact`` None); None: solve it only when
        :func:`allocation.hyperx.bandwidth.exact_is_cheap` says so (at most
        ``EXACT_AUTO_MAX_VARIABLES`` path variables, i.e. any partition of the
        8x8 machine).

    Examples
    --------
    >>> from allocation.hyperx.policies import static_partition
    >>> hx = HyperX((8, 8), 8)
    >>> p = partition_properties(hx, static_partition("diagonal", 8, 0))
    >>> p.switches, p.max_distance, p.convexity, p.switch_locality, p.hull_links
    (8, 2, 'non-convex', True, 112)
    >>> round(p.pb_bound, 6), round(p.pb_exact, 6)
    (2.0, 2.0)
    """
    ep = _endpoints(topology, endpoints)
    sw, w = switch_counts(topology, ep)
    d_avg = switch_average_distance(topology, sw, w)
    d_max = int(max_pair_distance(topology.switch_coords()[sw])) if sw.size > 1 else 0
    n_hull = _n_hull_links(topology, sw)
    size = int(ep.size)
    bound = math.inf if d_avg <= 1e-12 else 2.0 * n_hull / (size * d_avg)
    if exact is None:
        exact = exact_is_cheap(topology, sw.size)
    pb_exact = float(exact_partition_bandwidth(topology, ep)) if exact else None
    return PartitionProperties(
        size=size,
        switches=int(sw.size),
        avg_distance=float(d_avg),
        max_distance=d_max,
        convexity=convexity(topology, sw),
        switch_locality=bool(np.all(w == topology.concentration)),
        hull_links=int(n_hull),
        pb_bound=float(bound),
        pb_exact=pb_exact,
    )
