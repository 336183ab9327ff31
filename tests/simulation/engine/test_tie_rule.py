"""The tie rule of engine 2.1: lowest cost, then flow control, then a random draw.

The authors' router keeps the candidates of lowest cost, removes those that
cannot take the packet, then draws one at random (docs/domain.md 6.7). Engine
2.0 drew among all tied candidates and made the packet wait when the drawn one
was busy. Each case calls the routing function on a hand-set state of an empty
4 x 4, c = 4 machine (every candidate's cost 0, or 64 for a deroute) with many
generator states, so a rule that depends on the draw fails in some of them.
"""

from __future__ import annotations

import numpy as np

from simulation.engine.network import build_network
from simulation.engine.rng import new_state

from .conftest import T_ROUTE as T
from .conftest import route_at_switch_0

SEEDS = range(64)


def _two_minimal_ports() -> tuple[int, list[int]]:
    """An endpoint on a switch unaligned with switch 0 in both dimensions, and the
    local ports of its two minimal hops (one per dimension)."""
    net = build_network((4, 4), 4)
    target = next(s for s in range(16) if all(net.coords[s] != net.coords[0]))
    ports = [int(net.dim_base[d]) + int(net.coords[target, d]) - 1 for d in range(2)]
    return target * 4, ports


def test_a_tie_goes_to_the_free_candidate_whatever_the_draw() -> None:
    dst, (a, b) = _two_minimal_ports()
    for busy, free in ((a, b), (b, a)):
        got = {route_at_switch_0("port", dst, {(busy, 0): T + 7}, rng=new_state(s))[0]
               for s in SEEDS}
        assert got == {(free, 0, 0)}


def test_a_free_tie_is_drawn_at_random_between_its_candidates() -> None:
    dst, (a, b) = _two_minimal_ports()
    ports = [route_at_switch_0("port", dst, {}, rng=new_state(s))[0][0] for s in SEEDS]
    assert set(ports) == {a, b}
    assert 16 <= ports.count(a) <= 48  # 64 fair draws: outside this about once in 10^4


def test_every_tied_candidate_busy_waits_for_the_first_to_free_and_draws_nothing() -> None:
    dst, (a, b) = _two_minimal_ports()
    rng = new_state(3)
    before = rng.copy()
    got = route_at_switch_0("port", dst, {(a, 0): T + 9, (b, 0): T + 4}, rng=rng)
    assert got == ((-1, -1, 0), T + 4)
    assert np.array_equal(rng, before)


def test_omniwar_waits_for_a_busy_minimal_port_rather_than_take_a_dearer_deroute() -> None:
    # endpoint 4 sits on switch 1, aligned with switch 0: one minimal port (cost 0),
    # the other ports of that dimension are deroutes (cost 64), free but dearer
    net = build_network((4, 4), 4)
    dst = 4
    d = next(d for d in range(2) if net.coords[1, d] != net.coords[0, d])
    minimal = int(net.dim_base[d]) + int(net.coords[1, d]) - 1
    assert route_at_switch_0("port", dst, {}, routing="omniwar")[0] == (minimal, 0, 0)
    got = {route_at_switch_0("port", dst, {(minimal, 0): T + 5}, routing="omniwar",
                             rng=new_state(s)) for s in SEEDS}
    assert got == {((-1, -1, 0), T + 5)}
