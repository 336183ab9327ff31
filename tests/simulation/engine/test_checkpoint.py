"""A run stopped at a chunk's end and resumed from its saved state ends bit for bit as
the run that never stopped: the loop keeps nothing outside the captured arrays."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from simulation.engine import RunState, SimConfig, Suspended, simulate, simulator
from simulation.engine.checkpoint import fingerprint

#: A loaded 4 x 4, c = 4 machine: a 16-rank all-to-all beside 40 endpoints of
#: full-rate background (open loop, so the packet pool grows while it runs).
LOADED = SimConfig(sides=(4, 4), concentration=4, ranks=16, pattern="all2all",
                   routing="omniwar", scenario="background", message_packets=48,
                   max_cycles=200_000, seed=3)
PARTS = [np.arange(0, 64, 4), np.setdiff1d(np.arange(64), np.arange(0, 64, 4))[:40]]


def _copied(state: RunState) -> RunState:
    """What a saved file holds: the arrays as they were at the save."""
    return dataclasses.replace(state, arrays={k: v.copy() for k, v in state.arrays.items()})


def _in_stops(config: SimConfig, every: int) -> tuple[dict, list[RunState]]:
    """Run ``config`` stopping after every ``every``-th chunk and resuming from the
    state saved there; the result and the states the run went through."""
    saved: list[RunState] = []
    calls = [0]

    def hook(cycle, capture):
        calls[0] += 1
        if calls[0] % every:
            return False
        saved.append(_copied(capture()))
        return True

    resume = None
    for _ in range(1000):
        try:
            return simulate(config, PARTS, checkpoint=hook, resume=resume).as_dict(), saved
        except Suspended as stop:
            stopped_at = stop.cycle
            resume = saved[-1]
        assert stopped_at == resume.cycle
    raise AssertionError("the run never ended")


def test_a_run_resumed_at_every_chunk_ends_as_the_uninterrupted_run(monkeypatch) -> None:
    whole = simulate(LOADED, PARTS).as_dict()
    # chunks of 64 cycles (704 VCs and endpoints): the pool grows between two stops
    monkeypatch.setattr(simulator, "_CHUNK_WORK", 704 * 64)
    stopped, saved = _in_stops(LOADED, every=1)
    assert whole["completed"] and len(saved) >= 5
    assert stopped == whole
    pool_rows = [len(s.arrays["pool.pk"]) for s in saved]
    assert pool_rows[-1] > pool_rows[0], "the pool should grow between two stops"


def test_stops_at_other_chunks_and_seeds_end_the_same() -> None:
    for seed, every in ((4, 2), (5, 3)):
        config = dataclasses.replace(LOADED, seed=seed, message_packets=24)
        assert _in_stops(config, every)[0] == simulate(config, PARTS).as_dict()


def test_a_hook_that_never_stops_changes_nothing() -> None:
    seen = []
    result = simulate(LOADED, PARTS, checkpoint=lambda cycle, capture: seen.append(cycle) is None
                      and False)
    assert result.as_dict() == simulate(LOADED, PARTS).as_dict()
    assert seen == sorted(seen) and seen[0] > 0 and seen[-1] < result.cycles


def test_another_runs_state_is_refused() -> None:
    _, saved = _in_stops(LOADED, every=2)
    other = dataclasses.replace(LOADED, seed=4)
    with pytest.raises(ValueError, match="another run"):
        simulate(other, PARTS, resume=saved[0])
    with pytest.raises(ValueError, match="another run"):
        simulate(LOADED, [PARTS[0], PARTS[1][:-1]], resume=saved[0])
    bent = dict(saved[0].arrays)
    bent["state.credits"] = bent["state.credits"][:-1]
    with pytest.raises(ValueError, match=r"state\.credits"):
        simulate(LOADED, PARTS, resume=dataclasses.replace(saved[0], arrays=bent))
    missing = {k: v for k, v in saved[0].arrays.items() if k != "ranks.recv"}
    with pytest.raises(ValueError, match=r"ranks\.recv"):
        simulate(LOADED, PARTS, resume=dataclasses.replace(saved[0], arrays=missing))


def test_the_fingerprint_names_the_engine_version(monkeypatch) -> None:
    from simulation.engine import checkpoint

    before = fingerprint(LOADED, PARTS)
    monkeypatch.setattr(checkpoint, "ENGINE_VERSION", "0.0")
    assert fingerprint(LOADED, PARTS) != before
