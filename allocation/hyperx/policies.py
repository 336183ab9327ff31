"""The policy registry: every allocation policy by name, the one table every layer
reads (:data:`REGISTRY`), with :func:`allocate`, which places a job by name, and the
seven static allocation functions of the study (docs/domain.md section 2.1).

A policy is its online form (``(placement, size, seed) -> endpoint ids``, in
:mod:`.online` for the study's seven, :mod:`.ours` for our own) and, for the
study's seven, a static formula. Adding a policy is one entry here plus its
function and its tests.

The machine is the 2D n x n HyperX with c = n (n^3 endpoints), split into n
disjoint partitions P_0 .. P_{n-1} of n^2 endpoints. Inside a partition, rank
``r = n*ry + rx`` maps to switch (sy, sx) and offset c:

========================  ==============================================
name                      f(p, ry, rx)
========================  ==============================================
row                       (p, ry, rx)
diagonal                  (ry, (ry + p) mod n, rx)
full_spread               (ry, rx, p)
rectangular               (2*(p div 2) + ry mod 2, (n/2)*(p mod 2) + ry div 2, rx)
l_shape                   (p + ry, p, rx) if ry < n/2 else (p, p + ry - n/2 + 1, rx)
random_switch             (sigma(p, ry), rx), sigma a permutation of switches
random_endpoint           pi(p, ry, rx), pi a permutation of endpoints
========================  ==============================================

Switch coordinates are taken mod n. Endpoint ids follow the package
conventions: ``(sy * n + sx) * n + c``.

A job of several partitions (``blocks > 1``) numbers its ranks as the study's
simulator (CaMinOS) numbers a job's tasks: by ascending server index over the
whole placement, not partition after partition (:func:`_union_ranks`).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .online import (
    AllocationError,
    Placement,
    place_diagonal,
    place_full_spread,
    place_l_shape,
    place_random_endpoint,
    place_random_switch,
    place_rectangular,
    place_row,
)
from .ours import place_least_loaded_diagonal
from .topology import HyperX

__all__ = ["BASELINE_POLICY", "CONTIGUOUS_POLICY", "ONLINE_POLICIES", "OWN_POLICIES",
           "PLACEMENT_VERSION", "POLICIES", "REGISTRY", "Policy", "allocate", "fits_formula",
           "static_partition", "static_partitions"]

#: Changes whenever a policy places a job differently (endpoints or rank order): a
#: simulation configured without explicit partitions is placed by these functions,
#: so a stored run is reused only for the same placement version. 2: a job over
#: several partitions takes CaMinOS's rank order (docs/domain.md section 2.1).
PLACEMENT_VERSION = 2

#: (p, ry, rx) index grids of shape (n, 1, 1), (1, n, 1), (1, 1, n), n, seed ->
#: the (n, n^2) endpoint ids of the n partitions, in rank order.
Formula = Callable[[np.ndarray, np.ndarray, np.ndarray, int, "int | None"], np.ndarray]


@dataclass(frozen=True)
class Policy:
    """One allocation policy: how it places a job online and, for the study's
    seven, its static formula on the n x n, c = n machine."""

    online: Callable[[Placement, int, int], np.ndarray]
    formula: Formula | None = None
    #: The formula cuts n x n/2 blocks: it needs an even n.
    needs_even: bool = False
    #: The switch coordinate (0: sy, 1: sx) that runs fastest along a partition's
    #: ranks, from which a job over several partitions numbers its ranks; None for
    #: the random policies, whose rank order is their draw (partitions concatenated).
    rank_axis: int | None = None


def _rng(seed: int | None) -> np.random.Generator:
    return np.random.default_rng(0 if seed is None else seed)


def _ids(sy, sx, c, n: int) -> np.ndarray:
    sy, sx, c = (np.broadcast_to(a, (n, n, n)) for a in (sy, sx, c))
    return ((sy * n + sx) * n + c).reshape(n, n * n).astype(np.int64)


def _row_formula(p, ry, rx, n, seed):
    return _ids(p, ry, rx, n)


def _diagonal_formula(p, ry, rx, n, seed):
    return _ids(ry, (ry + p) % n, rx, n)


def _full_spread_formula(p, ry, rx, n, seed):
    return _ids(ry, rx, p, n)


def _rectangular_formula(p, ry, rx, n, seed):
    return _ids(2 * (p // 2) + ry % 2, (n // 2) * (p % 2) + ry // 2, rx, n)


def _l_shape_formula(p, ry, rx, n, seed):
    half = n // 2
    vertical = ry < half
    return _ids(np.where(vertical, p + ry, p) % n,
                np.where(vertical, p, p + ry - half + 1) % n, rx, n)


def _random_switch_formula(p, ry, rx, n, seed):
    sigma = _rng(seed).permutation(n * n).reshape(n, n)  # (p, ry) -> switch
    switch = np.broadcast_to(sigma[:, :, None], (n, n, n))
    return (switch * n + rx).reshape(n, n * n)


def _random_endpoint_formula(p, ry, rx, n, seed):
    return _rng(seed).permutation(n**3).astype(np.int64).reshape(n, n * n)


#: Every policy by name: the study's seven in the study's order, then our own.
REGISTRY: dict[str, Policy] = {
    "row": Policy(place_row, _row_formula, rank_axis=1),
    "diagonal": Policy(place_diagonal, _diagonal_formula, rank_axis=1),
    "full_spread": Policy(place_full_spread, _full_spread_formula, rank_axis=1),
    "rectangular": Policy(place_rectangular, _rectangular_formula, needs_even=True, rank_axis=0),
    "l_shape": Policy(place_l_shape, _l_shape_formula, needs_even=True, rank_axis=0),
    "random_switch": Policy(place_random_switch, _random_switch_formula),
    "random_endpoint": Policy(place_random_endpoint, _random_endpoint_formula),
    "least_loaded_diagonal": Policy(place_least_loaded_diagonal),
}
#: The study's policies (those with a static formula), in the order of the study.
POLICIES: tuple[str, ...] = tuple(name for name, p in REGISTRY.items() if p.formula)
#: Our own policies (online only).
OWN_POLICIES: tuple[str, ...] = tuple(name for name, p in REGISTRY.items() if not p.formula)
#: Every policy the online allocator accepts: the study's seven, then our own.
ONLINE_POLICIES: tuple[str, ...] = tuple(REGISTRY)
#: The study's reference policy: results are given relative to it.
BASELINE_POLICY = "diagonal"
#: The policy that fills a machine in node order, as Slurm's linear placement does
#: (what a busy machine's other jobs look like in a calibration).
CONTIGUOUS_POLICY = "row"


def _known(policy: str, names: tuple[str, ...]) -> Policy:
    if policy not in names:
        raise ValueError(f"unknown policy {policy!r}; expected one of {', '.join(names)}")
    return REGISTRY[policy]


def check_policy(policy: str) -> str:
    """Return ``policy`` if it has a static formula, else raise ValueError listing those."""
    _known(policy, POLICIES)
    return policy


def fits_formula(policy: str, n: int) -> bool:
    """Whether ``policy`` has a static formula for the n x n, c = n machine."""
    spec = REGISTRY.get(policy)
    return bool(spec and spec.formula) and (n % 2 == 0 or not spec.needs_even)


def _check_n(policy: str, n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or int(n) < 1:
        raise ValueError(f"n must be an int >= 1, got {n!r}")
    n = int(n)
    if REGISTRY[policy].needs_even and n % 2:
        raise ValueError(f"policy {policy!r} needs an even n (n x n/2 blocks), got n={n}")
    return n


def _all_partitions(policy: str, n: int, seed: int | None) -> np.ndarray:
    """All n partitions as an (n, n^2) array of endpoint ids in rank order."""
    p = np.arange(n, dtype=np.int64)[:, None, None]
    ry = np.arange(n, dtype=np.int64)[None, :, None]
    rx = np.arange(n, dtype=np.int64)[None, None, :]
    return REGISTRY[policy].formula(p, ry, rx, n, seed)


def _union_ranks(policy: str, n: int, ids: np.ndarray) -> np.ndarray:
    """The endpoints of a job over several partitions in CaMinOS's task order.

    CaMinOS's selections return a job's servers sorted by index (switch, then
    port), so a job over two diagonals alternates between them instead of taking
    one diagonal's ranks, then the other's (docs/domain.md section 2.1). Here
    switch coordinates count from the job's first switch, mod n, with
    ``rank_axis`` fastest (the study's Rectangular and L-shape run along the other
    dimension from CaMinOS's shapes), so that one partition, and each partition of
    a job of at most n/2, keeps the study's formula order even where it wraps
    round the machine.
    """
    axis = REGISTRY[policy].rank_axis
    if axis is None:
        return ids
    switch, port = np.divmod(ids, n)
    sy, sx = np.divmod(switch, n)
    sy, sx = (sy - sy[0]) % n, (sx - sx[0]) % n
    slow, fast = (sy, sx) if axis == 1 else (sx, sy)
    return ids[np.argsort((slow * n + fast) * n + port, kind="stable")]


def allocate(
    topology: HyperX, available: np.ndarray, policy: str, node_count: int, seed: int = 0,
    busy: np.ndarray | None = None,
) -> np.ndarray:
    """Choose ``node_count`` available endpoints for a job with an online policy.

    Parameters
    ----------
    topology : HyperX
    available : numpy.ndarray of bool, shape (n_endpoints,)
        True for endpoints that are free and healthy.
    policy : str
        A name in :data:`REGISTRY`.
    node_count : int
        Number of endpoints (nodes) the job needs, >= 1.
    busy : numpy.ndarray of bool, optional
        Endpoints other jobs hold (policies that weigh the live load read it);
        default: every unavailable endpoint.
    seed : int
        Seed of the random policies (others ignore it); None means 0, so the
        result is always reproducible.

    Returns
    -------
    numpy.ndarray of int64
        ``node_count`` distinct available endpoint ids in rank order.

    Raises
    ------
    AllocationError
        When fewer than ``node_count`` endpoints are available.

    Examples
    --------
    >>> hx = HyperX((4, 4), 4)
    >>> free = np.ones(hx.n_endpoints, dtype=bool)
    >>> allocate(hx, free, "row", 6).tolist()
    [0, 1, 2, 3, 4, 5]
    >>> hx.switch_of(allocate(hx, free, "diagonal", 16)).tolist()[::4]
    [0, 5, 10, 15]
    >>> free[:60] = False
    >>> allocate(hx, free, "full_spread", 5)
    Traceback (most recent call last):
    ...
    allocation.hyperx.online.AllocationError: need 5 nodes, 4 available
    """
    spec = _known(policy, ONLINE_POLICIES)
    avail = np.asarray(available)
    if avail.shape != (topology.n_endpoints,):
        raise ValueError(
            f"available must have shape ({topology.n_endpoints},), got {avail.shape}"
        )
    avail = avail.astype(np.bool_, copy=False)
    if isinstance(node_count, bool) or not isinstance(node_count, numbers.Integral) \
            or node_count < 1:
        # A guard, not a check: the services checked the count at their boundary.
        raise ValueError(f"node_count (the job's size) must be an int >= 1, got {node_count!r}")
    node_count = int(node_count)
    n_free = int(np.count_nonzero(avail))
    if node_count > n_free:
        raise AllocationError(f"need {node_count} nodes, {n_free} available")
    held = ~avail if busy is None else np.asarray(busy, dtype=np.bool_)
    if held.shape != avail.shape:
        raise ValueError(f"busy must have shape ({topology.n_endpoints},)")
    out = spec.online(Placement(topology, avail, held), node_count, 0 if seed is None else seed)
    assert out.size == node_count
    return out.astype(np.int64, copy=False)


def static_partition(
    policy: str, n: int, index: int, blocks: int = 1, seed: int | None = None
) -> np.ndarray:
    """Endpoint ids of a static partition, in rank order.

    Parameters
    ----------
    policy : str
        One of :data:`POLICIES`.
    n : int
        Side of the 2D n x n machine with c = n (even for rectangular/l_shape).
    index : int
        Job slot j: the job takes partitions ``blocks*j .. blocks*j + blocks - 1``.
    blocks : int
        Number k of consecutive partitions (job size k * n^2).
    seed : int or None
        Seed of the random policies (None means 0); ignored by the others.

    Returns
    -------
    numpy.ndarray
        ``blocks * n**2`` endpoint ids; with one block, rank r is at index r of
        the formula; with several, in CaMinOS's task order (:func:`_union_ranks`:
        ascending server index; the random policies concatenate their partitions).

    Examples
    --------
    >>> static_partition("row", 4, 1).tolist()[:5]
    [16, 17, 18, 19, 20]
    >>> static_partition("full_spread", 4, 0).tolist()[:5]
    [0, 4, 8, 12, 16]
    >>> static_partition("diagonal", 4, 0, blocks=2).shape
    (32,)
    """
    check_policy(policy)
    n = _check_n(policy, n)
    for name, value, low in (("index", index, 0), ("blocks", blocks, 1)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
            raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    index, blocks = int(index), int(blocks)
    if blocks * (index + 1) > n:
        raise ValueError(
            f"partitions {blocks * index}..{blocks * index + blocks - 1} do not exist: "
            f"the {n} x {n} machine has {n} partitions (need blocks*(index+1) <= n)"
        )
    parts = _all_partitions(policy, n, seed)
    job = parts[blocks * index : blocks * (index + 1)].reshape(-1).copy()
    return job if blocks == 1 else _union_ranks(policy, n, job)


def static_partitions(policy: str, n: int, seed: int | None = None) -> list[np.ndarray]:
    """The n partitions of a policy on the n x n machine, each in rank order.

    >>> parts = static_partitions("l_shape", 4)
    >>> sorted(int(e) for p in parts for e in p) == list(range(64))
    True
    """
    check_policy(policy)
    n = _check_n(policy, n)
    return [row.copy() for row in _all_partitions(policy, n, seed)]
