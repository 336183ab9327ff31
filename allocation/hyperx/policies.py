"""The seven static allocation functions of the study (docs/domain.md section 2.1).

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
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["POLICIES", "static_partition", "static_partitions"]

#: Policy names, in the order of the study.
POLICIES: tuple[str, ...] = (
    "row",
    "diagonal",
    "full_spread",
    "rectangular",
    "l_shape",
    "random_switch",
    "random_endpoint",
)

_NEEDS_EVEN = ("rectangular", "l_shape")


def check_policy(policy: str) -> str:
    """Return ``policy`` if known, else raise ValueError listing the known ones."""
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; expected one of {', '.join(POLICIES)}")
    return policy


def _check_n(policy: str, n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or int(n) < 1:
        raise ValueError(f"n must be an int >= 1, got {n!r}")
    n = int(n)
    if policy in _NEEDS_EVEN and n % 2:
        raise ValueError(f"policy {policy!r} needs an even n (n x n/2 blocks), got n={n}")
    return n


def _rng(seed: int | None) -> np.random.Generator:
    return np.random.default_rng(0 if seed is None else seed)


def _all_partitions(policy: str, n: int, seed: int | None) -> np.ndarray:
    """All n partitions as an (n, n^2) array of endpoint ids in rank order."""
    p = np.arange(n, dtype=np.int64)[:, None, None]
    ry = np.arange(n, dtype=np.int64)[None, :, None]
    rx = np.arange(n, dtype=np.int64)[None, None, :]
    shape = (n, n, n)
    if policy == "row":
        sy, sx, c = p, ry, rx
    elif policy == "full_spread":
        sy, sx, c = ry, rx, p
    elif policy == "diagonal":
        sy, sx, c = ry, (ry + p) % n, rx
    elif policy == "rectangular":
        sy = 2 * (p // 2) + ry % 2
        sx = (n // 2) * (p % 2) + ry // 2
        c = rx
    elif policy == "l_shape":
        half = n // 2
        vertical = ry < half
        sy = np.where(vertical, p + ry, p) % n
        sx = np.where(vertical, p, p + ry - half + 1) % n
        c = rx
    elif policy == "random_switch":
        sigma = _rng(seed).permutation(n * n).reshape(n, n)  # (p, ry) -> switch
        switch = np.broadcast_to(sigma[:, :, None], shape)
        return (switch * n + rx).reshape(n, n * n)
    elif policy == "random_endpoint":
        return _rng(seed).permutation(n**3).astype(np.int64).reshape(n, n * n)
    else:  # pragma: no cover - guarded by check_policy
        raise AssertionError(policy)
    sy, sx, c = (np.broadcast_to(a, shape) for a in (sy, sx, c))
    return ((sy * n + sx) * n + c).reshape(n, n * n).astype(np.int64)


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
        ``blocks * n**2`` endpoint ids; rank r of partition p is at
        ``(p - blocks*index) * n**2 + r``.

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
    return parts[blocks * index : blocks * (index + 1)].reshape(-1).copy()


def static_partitions(policy: str, n: int, seed: int | None = None) -> list[np.ndarray]:
    """The n partitions of a policy on the n x n machine, each in rank order.

    >>> parts = static_partitions("l_shape", 4)
    >>> sorted(int(e) for p in parts for e in p) == list(range(64))
    True
    """
    check_policy(policy)
    n = _check_n(policy, n)
    return [row.copy() for row in _all_partitions(policy, n, seed)]
