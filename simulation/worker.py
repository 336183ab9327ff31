"""Celery worker hooks of the simulation app: warm the engine before work arrives.

The engine's compiled loop is loaded from numba's on-disk cache (or compiled on
a cold cache) the first time a process simulates; in a browser trial that made
the first recommendation after a worker start take 25 s. The worker's main
process warms the engine once before it starts consuming; its prefork pool
processes are forked afterwards and inherit the compiled code, so no task pays
for it.

After the warm-up the objects it left are frozen out of the garbage collector
(``gc.freeze``, which Python's documentation advises before forking workers):
the forked pool processes then share those pages instead of copying them when
the collector touches them, and no process walks them again at exit, which made
a stopping worker spend seconds collecting before it could end.
"""

from __future__ import annotations

import gc
import logging
import time

from celery.signals import worker_init

from simulation.engine import warm_up

logger = logging.getLogger(__name__)

__all__ = ["warm_engine"]


@worker_init.connect
def warm_engine(**_kwargs: object) -> float:
    """Compile or load every engine specialisation the portal uses; returns seconds."""
    start = time.perf_counter()
    warm_up()
    gc.freeze()
    seconds = time.perf_counter() - start
    logger.info("simulation engine warmed up in %.1f s", seconds)
    return seconds
