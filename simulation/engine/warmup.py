"""Compile or load every numba specialization of the engine up front.

The first :func:`simulation.engine.simulate` in a process pays for numba:
loading the cycle loop from numba's on-disk cache (well under a second), or
compiling it when the cache is cold or stale (tens of seconds).  A worker
that calls :func:`warm_up` once at start-up moves that cost out of the first
job.  The tiny runs below cover every routing algorithm and every kind of
traffic the loop distinguishes (uniform and fixed-partner open loop, both
all-to-all schedules, listed kernels with and without dependencies, the
interference background), on a 2D machine, so whatever the product asks for
next runs on compiled code.

Examples
--------
>>> seconds = warm_up()
>>> seconds >= 0.0
True
"""

from __future__ import annotations

import time

import numpy as np

from allocation.hyperx.patterns import ALL2ALL, ALLREDUCE, PERMUTATION, STENCIL4, UNIFORM

from .config import ROUTINGS, SimConfig
from .simulator import simulate

__all__ = ["warm_up"]

_CASES: tuple[dict[str, object], ...] = (
    {"pattern": UNIFORM, "rate": 0.5, "packets_per_task": 2},
    {"pattern": PERMUTATION, "rate": 0.5, "max_cycles": 300, "warmup_cycles": 100},
    {"pattern": ALL2ALL, "message_packets": 1},
    {"pattern": ALL2ALL, "message_packets": 2, "all2all_schedule": "blocks"},
    {"pattern": ALLREDUCE, "message_packets": 2},
    {"pattern": STENCIL4, "message_packets": 1},
    {"pattern": ALL2ALL, "message_packets": 1, "scenario": "interference", "ranks": 4,
     "vc_sets": "per_partition"},
)


def warm_up() -> float:
    """Run one tiny simulation per routing and traffic kind; return the seconds taken."""
    t0 = time.perf_counter()
    for routing in ROUTINGS:
        for case in _CASES:
            kw: dict[str, object] = {"sides": (2, 2), "concentration": 2, "ranks": 8,
                                     "routing": routing, "max_cycles": 5000, **case}
            cfg = SimConfig(**kw)  # type: ignore[arg-type]
            simulate(cfg, [np.arange(cfg.ranks)])
    return time.perf_counter() - t0
