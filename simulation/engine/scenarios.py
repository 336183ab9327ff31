"""Scenarios: which applications run on which partitions.

- ``single``: one application on one partition;
- ``escalation``: ``replicas`` copies of the application on as many disjoint
  partitions of the policy;
- ``interference``: one target application; every endpoint outside the
  target partition(s) sends a random permutation (open loop, unbounded) at
  ``background_rate``;
- ``background``: the first partition runs the application; the endpoints of
  the other partitions (the jobs already running on a real machine) send the
  random-permutation background; free endpoints stay idle. This is how a
  recommendation simulates a candidate on the live occupancy.

With ``vc_sets='per_partition'`` each application, and the background, gets
its own set of ``vcs`` VCs.
"""

from __future__ import annotations

import numpy as np

from allocation.hyperx import HyperX, allocate, fits_formula, static_partition

from .config import SimConfig
from .kernels import KERNELS
from .traffic import AppSpec

__all__ = ["build_apps", "build_partitions", "check_partitions"]


def build_partitions(config: SimConfig) -> list[np.ndarray]:
    """Partitions for ``config`` from the allocation engine.

    Uses ``allocation.hyperx.static_partition`` for the study's seven policies
    when the machine is a 2D
    ``n x n`` HyperX with ``c = n`` and ``ranks`` is a multiple of ``n^2``
    (job ``i`` takes ``ranks / n^2`` consecutive partitions), otherwise the
    online ``allocate`` on the machine with earlier replicas marked busy
    (replica ``i`` uses seed ``seed + i``).

    Raises
    ------
    allocation.hyperx.AllocationError
        When the online allocator cannot place a replica.
    """
    n_apps = config.replicas if config.scenario == "escalation" else 1
    sides = config.sides
    c = config.concentration
    n = sides[0]
    if (
        fits_formula(config.policy, n)
        and len(sides) == 2
        and sides[0] == sides[1] == c
        and config.ranks % (n * n) == 0
        and n_apps * (config.ranks // (n * n)) <= n
    ):
        blocks = config.ranks // (n * n)
        return [
            np.asarray(static_partition(config.policy, n, i, blocks=blocks, seed=config.seed))
            for i in range(n_apps)
        ]
    topo = HyperX(sides=tuple(sides), concentration=c)
    available = np.ones(config.endpoints, dtype=bool)
    parts = []
    for i in range(n_apps):
        part = np.asarray(
            allocate(topo, available.copy(), config.policy, config.ranks, seed=config.seed + i)
        )
        available[part] = False
        parts.append(part)
    return parts


def check_partitions(partitions: list[np.ndarray], endpoints: int) -> list[np.ndarray]:
    """Validate caller partitions: int ids in range, at least 2, disjoint.

    Examples
    --------
    >>> check_partitions([np.array([0, 1]), np.array([1, 2])], 4)
    Traceback (most recent call last):
    ...
    ValueError: partitions: endpoints used twice: [1]
    """
    out = []
    for i, p in enumerate(partitions):
        a = np.asarray(p)
        if a.ndim != 1 or a.size < 2 or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"partitions: partition {i} must be >= 2 integer endpoint ids")
        if a.min() < 0 or a.max() >= endpoints:
            raise ValueError(f"partitions: partition {i} has ids outside [0, {endpoints})")
        out.append(a.astype(np.int64))
    if not out:
        raise ValueError("partitions: at least one partition is needed")
    allp = np.concatenate(out)
    uniq, counts = np.unique(allp, return_counts=True)
    if np.any(counts > 1):
        raise ValueError(f"partitions: endpoints used twice: {uniq[counts > 1][:10].tolist()}")
    return out


def build_apps(config: SimConfig, partitions: list[np.ndarray]) -> list[AppSpec]:
    """Application specs of ``config``'s scenario on ``partitions``.

    In ``single`` only the first partition is used; in ``escalation`` and
    ``interference`` every given partition runs the application.  Each
    application is labelled with ``config.policy`` (the caller's partitions
    are assumed to come from it).

    Examples
    --------
    >>> cfg = SimConfig(sides=(2, 2), concentration=2, ranks=4, scenario="interference")
    >>> apps = build_apps(cfg, [np.array([0, 1, 2, 3])])
    >>> [(a.role, len(a.endpoints)) for a in apps]
    [('app', 4), ('background', 4)]
    >>> cfg = SimConfig(sides=(2, 2), concentration=2, ranks=4, scenario="background")
    >>> apps = build_apps(cfg, [np.array([0, 1, 2, 3]), np.array([4, 5])])
    >>> [(a.role, len(a.endpoints)) for a in apps]
    [('app', 4), ('background', 2)]
    """
    parts = check_partitions(partitions, config.endpoints)
    background = None
    if config.scenario == "background":
        if len(parts) < 2:
            raise ValueError("partitions: the background scenario needs the target partition "
                             "and at least one background partition")
        background = np.concatenate(parts[1:])
    if config.scenario in ("single", "background"):
        parts = parts[:1]
    per = config.vc_sets == "per_partition"
    kernel = config.is_kernel
    rule = KERNELS.get(config.pattern)
    if rule is not None and not all(rule.ranks_ok(len(p)) for p in parts):
        raise ValueError(f"partitions: {config.pattern} needs {rule.rank_rule} in each "
                         "partition")
    apps = [
        AppSpec(
            endpoints=p,
            pattern=config.pattern,
            rate=config.rate,
            packets_per_task=None if kernel else config.packets_per_task,
            message_packets=config.kernel_message_packets,
            vc_set=i if per else 0,
            policy=config.policy,
        )
        for i, p in enumerate(parts)
    ]
    if config.scenario in ("interference", "background"):
        if background is None:
            busy = np.zeros(config.endpoints, dtype=bool)
            busy[np.concatenate(parts)] = True
            background = np.nonzero(~busy)[0]
        bg = background
        if bg.size >= 2:
            apps.append(
                AppSpec(
                    endpoints=bg,
                    pattern="permutation",
                    rate=config.background_rate,
                    packets_per_task=None,
                    message_packets=1,
                    vc_set=len(parts) if per else 0,
                    policy="background",
                    role="background",
                )
            )
    return apps
