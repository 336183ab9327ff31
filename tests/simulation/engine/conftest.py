"""Shared helpers for the simulator tests (explicit partitions, no allocator)."""

from __future__ import annotations

import numpy as np
import pytest

from simulation.engine import SimConfig, SimResult, simulate


def run(partitions: list | None = None, **kw: object) -> SimResult:
    """Simulate ``SimConfig(**kw)`` on explicit partitions (default: all endpoints)."""
    cfg = SimConfig(**kw)
    if partitions is None:
        partitions = [np.arange(cfg.endpoints)]
    return simulate(cfg, [np.asarray(p) for p in partitions])


@pytest.fixture
def small() -> dict:
    """A 4 x 4 HyperX with c = 4 (64 endpoints)."""
    return {"sides": (4, 4), "concentration": 4, "ranks": 64}
