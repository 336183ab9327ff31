"""Property-based checks over random small machines and workloads."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simulation.engine import SimConfig, simulate
from simulation.engine.config import KERNEL_PATTERNS, required_vcs


@st.composite
def workloads(draw: st.DrawFn) -> tuple[SimConfig, list[np.ndarray]]:
    sides = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    c = draw(st.integers(1, 3))
    n_ep = int(np.prod(sides)) * c
    if n_ep < 2:
        sides, n_ep = (2,), 2 * c
    routing = draw(st.sampled_from(["dor", "min", "valiant", "omniwar"]))
    pattern = draw(st.sampled_from(("uniform", "permutation", *KERNEL_PATTERNS)))
    k = draw(st.integers(2, n_ep))
    if pattern == "allreduce":
        k = 1 << (k.bit_length() - 1)
    perm = np.random.default_rng(draw(st.integers(0, 10**6))).permutation(n_ep)
    cfg = SimConfig(
        sides=sides,
        concentration=c,
        routing=routing,
        vcs=max(2, required_vcs(routing, len(sides))),
        pattern=pattern,
        ranks=k,
        rate=draw(st.sampled_from([0.1, 0.5, 1.0])),
        packets_per_task=draw(st.integers(1, 4)),
        message_packets=draw(st.integers(1, 3)),
        allocator=draw(st.sampled_from(["random", "round_robin"])),
        speedup=draw(st.integers(1, 3)),
        input_buffer_packets=draw(st.integers(1, 3)),
        output_buffer_packets=draw(st.integers(1, 3)),
        link_latency=draw(st.integers(1, 3)),
        seed=draw(st.integers(0, 1000)),
        max_cycles=200_000,
    )
    return cfg, [perm[:k]]


@settings(
    max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(workloads())
def test_finite_work_always_completes_exactly_once(work: tuple) -> None:
    """Any finite workload on any small HyperX, routing and buffer sizes
    (down to one packet per buffer) completes: no deadlock, every packet
    delivered exactly once, and the run is reproducible."""
    cfg, parts = work
    res = simulate(cfg, parts)
    assert res.completed, cfg
    assert res.packets_delivered == res.packets_injected and res.packets_in_flight == 0
    assert res.makespan_cycles == res.cycles - 1
    assert simulate(cfg, parts).as_dict() == res.as_dict()


def test_unfinished_run_reports_no_makespan() -> None:
    cfg = SimConfig(sides=(2, 2), concentration=2, ranks=8, pattern="all2all", max_cycles=50)
    res = simulate(cfg, [np.arange(8)])
    assert not res.completed and res.makespan_cycles is None
    assert res.apps[0].completion_cycles is None and res.cycles == 50
    assert res.packets_injected == res.packets_delivered + res.packets_in_flight
