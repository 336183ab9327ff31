"""A run's whole state between two chunks of the loop, to continue it later bit for bit.

A 65,536-node calibration point runs for hours: longer than one Celery task may
take, and too long to lose to a killed worker. Between two calls of the cycle
loop every bit of a run lives in the numpy arrays of the packet pool, the network
and the ranks (the loop keeps nothing in locals across calls; the traffic tables
and parameters are rebuilt from the configuration the same way every time), so
those arrays and the cycle are the run. :func:`capture` names them, without
copying; :func:`restore` writes them back into a freshly built run and checks
that it is the same run (:func:`fingerprint`: configuration, partitions, engine
version, and every array's shape and type).

The engine stays free of files and clocks: ``simulate(checkpoint=...)`` calls the
caller's hook after every chunk with the cycle and a way to capture the state; the
hook decides when to save (and where), and whether to stop
(:class:`Suspended`). ``simulate(resume=...)`` continues from a saved state.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .config import SimConfig
from .results import ENGINE_VERSION

__all__ = ["CheckpointHook", "CheckpointMismatch", "RunState", "Suspended", "capture",
           "fingerprint", "restore"]

#: Array groups of a run, by the name of the simulator's dictionary holding them.
GROUPS = ("pool", "state", "ranks")
#: The pool's arrays that make the run (``records`` and ``stack`` are the reservation
#: behind the views ``pk`` and ``free_stack``).
POOL_ARRAYS = ("pk", "free_stack", "st", "rng")


@dataclass(frozen=True)
class RunState:
    """A run at the end of cycle ``cycle - 1``: its arrays by ``group.name``."""

    cycle: int
    fingerprint: str
    arrays: dict[str, np.ndarray]

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays.values())


class CheckpointMismatch(ValueError):
    """A saved state that is not this run's: another configuration, partitions or
    engine version, or another layout of its arrays."""


class Suspended(Exception):
    """The checkpoint hook asked the run to stop at ``cycle`` (it saved the state)."""

    def __init__(self, cycle: int) -> None:
        super().__init__(f"suspended at cycle {cycle}")
        self.cycle = cycle


#: ``hook(cycle, capture) -> stop``: called after every chunk of cycles; ``capture()``
#: gives the state *without copying*, so the hook writes it before returning.
CheckpointHook = Callable[[int, Callable[[], RunState]], bool]


def fingerprint(config: SimConfig, partitions: list[np.ndarray]) -> str:
    """What makes two runs the same run: configuration, partitions, engine version.

    >>> a = fingerprint(SimConfig(), [np.arange(4)])
    >>> same = fingerprint(SimConfig(), [np.arange(4)])
    >>> other = fingerprint(SimConfig(seed=2), [np.arange(4)])
    >>> a == same, a == other
    (True, False)
    """
    digest = hashlib.sha256(json.dumps(
        {"config": config.to_dict(), "engine": ENGINE_VERSION}, sort_keys=True).encode())
    for part in partitions:
        digest.update(np.ascontiguousarray(part, dtype=np.int64).tobytes())
        digest.update(b"|")
    return digest.hexdigest()


def capture(cycle: int, run_fingerprint: str, pool: dict, state: dict,
            ranks: dict) -> RunState:
    """The run's arrays, by reference."""
    arrays = {f"pool.{name}": pool[name] for name in POOL_ARRAYS}
    arrays.update({f"state.{name}": a for name, a in state.items()})
    arrays.update({f"ranks.{name}": a for name, a in ranks.items()})
    return RunState(cycle, run_fingerprint, arrays)


def restore(saved: RunState, run_fingerprint: str, pool: dict, state: dict,
            ranks: dict) -> int:
    """Write ``saved`` into a freshly built run (in place); its cycle.

    Raises :class:`CheckpointMismatch` when ``saved`` is another run's, or another
    engine's layout: nothing is written then.
    """
    if saved.fingerprint != run_fingerprint:
        raise CheckpointMismatch("the checkpoint is of another run (configuration, partitions or "
                         "engine version differ)")
    targets = {f"state.{name}": a for name, a in state.items()}
    targets.update({f"ranks.{name}": a for name, a in ranks.items()})
    targets.update({f"pool.{name}": pool[name] for name in ("st", "rng")})
    expected = set(targets) | {"pool.pk", "pool.free_stack"}
    if set(saved.arrays) != expected:
        raise CheckpointMismatch("the checkpoint's arrays are not this engine's: "
                         f"{sorted(set(saved.arrays) ^ expected)}")
    for name, target in targets.items():
        _check_like(name, saved.arrays[name], target.shape, target.dtype)
    pk, stack = saved.arrays["pool.pk"], saved.arrays["pool.free_stack"]
    _check_like("pool.pk", pk, (len(pk), *pool["pk"].shape[1:]), pool["pk"].dtype)
    _check_like("pool.free_stack", stack, (len(pk),), pool["free_stack"].dtype)
    for name, target in targets.items():
        target[...] = saved.arrays[name]
    _restore_pool(pool, pk, stack)
    return saved.cycle


def _check_like(name: str, array: np.ndarray, shape: tuple, dtype: np.dtype) -> None:
    if array.shape != tuple(shape) or array.dtype != dtype:
        raise CheckpointMismatch(f"the checkpoint's {name} is {array.dtype}{list(array.shape)}, "
                         f"this run's {np.dtype(dtype)}{list(shape)}")


def _restore_pool(pool: dict, pk: np.ndarray, stack: np.ndarray) -> None:
    """The pool as the saved run had grown it: its first ``len(pk)`` records in use,
    within the reservation when that is as large (else a reservation of that size,
    which the pool's growth widens as before)."""
    n = len(pk)
    if pool["records"].shape[0] < n:
        pool["records"] = np.zeros((n, *pk.shape[1:]), pk.dtype)
        pool["stack"] = np.zeros(n, stack.dtype)
    pool["records"][:n] = pk
    pool["stack"][:n] = stack
    pool["pk"], pool["free_stack"] = pool["records"][:n], pool["stack"][:n]
