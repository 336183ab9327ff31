"""Fixtures of the simulation app tests: small configurations that simulate in ms."""

from __future__ import annotations

import pytest

TINY = {"sides": [4, 4], "concentration": 4, "ranks": 16, "pattern": "all2all",
        "policy": "diagonal", "message_packets": 1, "max_cycles": 20_000}


@pytest.fixture
def tiny() -> dict:
    """A 16-rank all-to-all on a 4x4, c = 4 HyperX (a few ms of simulation)."""
    return dict(TINY)


def run_pending(queryset) -> int:
    """Execute every pending run of ``queryset`` through the task, in this process."""
    from simulation import tasks

    ids = list(queryset.filter(status="pending").order_by("id").values_list("id", flat=True))
    for pk in ids:
        tasks.run_simulation.apply(args=[pk])
    return len(ids)


def pytest_collection_modifyitems(config, items):
    """Slow runs (the whole study) only when asked for with ``-m slow`` (make test-slow)."""
    if "slow" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow (make test-slow)")
    for item in items:
        if "tests/simulation/" in str(item.fspath) and item.get_closest_marker("slow"):
            item.add_marker(skip)
