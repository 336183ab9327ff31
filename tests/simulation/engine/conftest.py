"""Shared helpers for the simulator tests (explicit partitions, no allocator)."""

from __future__ import annotations

import numpy as np
import pytest

from simulation.engine import SimConfig, SimResult, simulate
from simulation.engine import loop as L
from simulation.engine.network import build_network
from simulation.engine.rng import new_state
from simulation.engine.routing import F_DST, F_HOPS, F_VCSET, N_FIELDS
from simulation.engine.simulator import _routing_params

#: the cycle at which :func:`route_at_switch_0` routes its packet
T_ROUTE = 100


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


def route_at_switch_0(crossbar: str, dst: int, busy: dict[tuple[int, int], int],
                      routing: str = "min", rng: np.ndarray | None = None,
                      ) -> tuple[tuple[int, int, int], int]:
    """Route packet 0 (hop 0, VC set 0) at switch 0 of an empty 4 x 4, c = 4 machine
    to endpoint ``dst`` at cycle :data:`T_ROUTE`; ``busy`` maps (local output port,
    VC) to the cycle until which the crossbar feeds it (the whole port with
    ``crossbar: port``); ``rng`` is the generator state (seed 1 by default).
    Returns route's ``(local port, vc, deroute)`` and the head's recorded wake-up."""
    cfg = SimConfig(sides=(4, 4), concentration=4, routing=routing, crossbar=crossbar)
    net = build_network(cfg.sides, cfg.concentration)
    vt = cfg.total_vcs
    prm = _routing_params(cfg, net, vt)
    nvc = net.ports * vt
    xout_busy = np.zeros(nvc if crossbar == "vc" else net.ports, np.int64)
    for (lp, v), until in busy.items():
        xout_busy[lp * vt + v if crossbar == "vc" else lp] = until
    pk = np.zeros((1, N_FIELDS), np.int32)
    pk[0, F_DST], pk[0, F_HOPS], pk[0, F_VCSET] = dst, 0, 0
    head = np.full((nvc, L.N_H), -1, np.int64)
    got = L.route(
        0, 0, T_ROUTE, pk, net.coords, net.dim_base, np.zeros(nvc, np.int32), xout_busy,
        new_state(1) if rng is None else rng, prm, net.out_down_in,
        np.full(nvc, cfg.input_buffer_packets, np.int32), cfg.input_buffer_packets, head, 0,
        np.zeros(net.ports, np.int64), np.zeros(net.ports, np.int32), np.int64(0),
        np.full((1, L.N_M), -1, np.int64),
    )  # fmt: skip
    return tuple(int(x) for x in got), int(head[0, L.H_WAKE])
