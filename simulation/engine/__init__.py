"""Pure packet-level HyperX network simulator (no Django, no I/O, no clock).

Modules
-------
config
    :class:`SimConfig`, the validated run parameters (study defaults).
network
    Port tables of a q-dimensional HyperX.
routing
    DOR, MIN, Valiant and Omni-WAR, deadlock free through VC classes.
traffic
    Open-loop patterns and closed-loop kernels compiled into rank tables.
scenarios
    ``single``, ``escalation`` and ``interference``; partitions from
    ``allocation.hyperx`` when none are given.
loop
    The numba-compiled cycle loop (virtual cut-through, credits).
simulator
    :func:`simulate`: builds the tables, runs the loop in chunks, checks
    conservation and summarises.
checkpoint
    A run's state between two chunks (:class:`RunState`), to continue it later
    bit for bit; the caller's hook saves it (the engine does no I/O).
results
    :class:`SimResult` and :class:`AppResult`.
warmup
    :func:`warm_up`: compile or load the numba code before the first job.

Examples
--------
>>> import numpy as np
>>> from simulation.engine import SimConfig, simulate
>>> cfg = SimConfig(sides=(2, 2), concentration=2, ranks=8, pattern="uniform",
...                 rate=0.3, packets_per_task=5, max_cycles=10_000)
>>> res = simulate(cfg, [np.arange(8)])
>>> res.completed, res.packets_delivered
(True, 40)
"""

from .checkpoint import RunState, Suspended
from .config import SimConfig
from .results import ENGINE_VERSION, AppResult, SimResult
from .simulator import simulate
from .warmup import warm_up

__all__ = ["ENGINE_VERSION", "AppResult", "RunState", "SimConfig", "SimResult", "Suspended",
           "simulate", "warm_up"]
