"""The loop's memo of candidate ports (``loop._port_choice``) changes no run.

A memo row is reused while its output port's stamp is the one it was written
at; every change of a port's occupancy, credits or crossbar output moves the
stamp on (``loop._touch``).  If one did not, a head would read a stale cost
and the run would drift: the whole-run comparison below, memo on against
memo off, catches that; the unit cases pin down the reuse rule itself.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from simulation.engine import SimConfig, simulate, simulator
from simulation.engine import loop as L
from simulation.engine.network import build_network
from simulation.engine.scenarios import build_partitions

VT, BOUT, CAP = 4, 4, 8


def _memo(rows: int) -> np.ndarray:
    memo = np.zeros((rows, L.N_M), np.int64)
    memo[:, L.M_STAMP] = -1
    return memo


def _choice(out_used, credits, stamp, memo, lo=0, hi=2):
    net = build_network((4, 4), 4)
    xout_busy = np.zeros(net.ports, np.int64)
    xout_busy[7] = 50
    got = L._port_choice(7, lo, hi, out_used, xout_busy, VT, BOUT, False, net.out_down_in,
                         credits, CAP, np.full(net.ports, 3, np.int32), True, stamp, memo)
    return tuple(int(x) for x in got)


def _state():
    net = build_network((4, 4), 4)
    out_used = np.zeros(net.ports * VT, np.int32)
    out_used[7 * VT: 7 * VT + 2] = (2, 1)  # VC 1 has more free slots
    credits = np.full(net.ports * VT, CAP, np.int32)
    return out_used, credits, np.zeros(net.ports, np.int64), _memo(net.ports * VT)


def test_a_row_is_reused_while_the_stamp_stays_and_redone_when_it_moves() -> None:
    out_used, credits, stamp, memo = _state()
    first = _choice(out_used, credits, stamp, memo)
    assert first == (1, 1 + 3, 50)  # VC 1: one slot in use plus the port's 3; busy until 50
    out_used[7 * VT + 1] = BOUT  # VC 1 full, without moving the stamp: the row is reused
    assert _choice(out_used, credits, stamp, memo) == first
    stamp[7] = 9  # the loop moves the stamp with every change of the port
    assert _choice(out_used, credits, stamp, memo) == (0, 2 + 3, 50)
    out_used[7 * VT] = BOUT
    stamp[7] = 10
    assert _choice(out_used, credits, stamp, memo)[2] == L.NEVER  # full: never


def test_another_class_end_or_a_disabled_memo_recomputes() -> None:
    out_used, credits, stamp, memo = _state()
    assert _choice(out_used, credits, stamp, memo, hi=2)[0] == 1
    out_used[7 * VT + 2] = 0
    out_used[7 * VT + 1] = 3
    assert _choice(out_used, credits, stamp, memo, hi=3)[0] == 2  # same row, other class
    off = _memo(1)
    assert _choice(out_used, credits, stamp, off, hi=2)[0] == 0
    out_used[7 * VT] = 4
    assert _choice(out_used, credits, stamp, off, hi=2)[0] == 1  # recomputed every time


_RUNS = {
    "interference_all2all": dict(sides=(8, 8), concentration=8, ranks=64,
                                 scenario="interference", pattern="all2all",
                                 policy="random_endpoint", message_packets=2,
                                 background_rate=1.0, routing="omniwar", max_cycles=60_000,
                                 seed=21),
    "uniform_0.9_vc_cost": dict(sides=(4, 4), concentration=4, ranks=64, pattern="uniform",
                                rate=0.9, routing="omniwar", occupancy="vc", max_cycles=3000,
                                warmup_cycles=500, seed=22),
}


@pytest.mark.parametrize("name", sorted(_RUNS))
def test_a_run_is_the_same_with_the_memo_and_without(name, monkeypatch) -> None:
    cfg = SimConfig(**_RUNS[name])
    parts = (build_partitions(cfg) if cfg.scenario == "interference"
             else [np.arange(cfg.endpoints)])
    with_memo = json.dumps(simulate(cfg, parts).as_dict())
    monkeypatch.setattr(simulator, "_candidate_memo", lambda config, nvc: _memo(1))
    without = json.dumps(simulate(cfg, parts).as_dict())
    assert with_memo == without
