"""Check calls read the head record, not the packet.

A blocked MIN / Omni-WAR head is re-checked whenever one of its candidate ports
changes; at high load that is most of the routing function's calls. Its failed
full evaluation keeps what a check needs of the packet (its VC class and its
minimal ports) in the head record, so a check reads no packet record. These
tests drive ``route`` on a hand-set state of an empty 4 x 4, c = 4 machine:
a check gives the full evaluation's verdict even when the packet record has
been overwritten, and a record kept for one packet is never used for the next.
Since engine 2.3 a check also decides a failure whose lowest cost it knows (a
changed port undercuts the tied set but cannot take the packet; a wake-up whose
tied ports stayed busy), with the record a full evaluation would leave; since
2.4 also when every tied port got dearer but stays below the bound the record
keeps on the other candidates (``H_FLOOR``).
"""

from __future__ import annotations

import numpy as np

from simulation.engine import SimConfig
from simulation.engine import loop as L
from simulation.engine.network import build_network
from simulation.engine.rng import new_state
from simulation.engine.routing import F_DST, F_HOPS, F_VCSET, N_FIELDS
from simulation.engine.simulator import _routing_params

T = 100


class Switch0:
    """Route packet 0 of input VC 0 at switch 0, keeping the head record between calls."""

    def __init__(self, routing: str = "min") -> None:
        cfg = SimConfig(sides=(4, 4), concentration=4, routing=routing)
        self.net = build_network(cfg.sides, cfg.concentration)
        self.vt = cfg.total_vcs
        self.prm = _routing_params(cfg, self.net, self.vt)
        nvc = self.net.ports * self.vt
        self.cap = cfg.input_buffer_packets
        self.xout_busy = np.zeros(self.net.ports, np.int64)
        self.pk = np.zeros((1, N_FIELDS), np.int32)
        self.head = np.full((nvc, L.N_H), -1, np.int64)
        self.out_used = np.zeros(nvc, np.int32)
        self.credits = np.full(nvc, self.cap, np.int32)

    def packet(self, dst: int) -> None:
        self.pk[0, F_DST], self.pk[0, F_HOPS], self.pk[0, F_VCSET] = dst, 0, 0

    def route(self, t: int, changed: int = 0) -> tuple[int, int, int]:
        """A full evaluation (``changed == 0``), else a check of the ports in ``changed``."""
        self.head[0, L.H_EVT] = 5 if changed else -1
        stamp = np.zeros(self.net.ports, np.int64)
        stamp[[lp for lp in range(64) if changed >> lp & 1]] = 6  # changed after event 5
        got = L.route(
            0, 0, t, self.pk, self.net.coords, self.net.dim_base, self.out_used,
            self.xout_busy, new_state(1), self.prm, self.net.out_down_in, self.credits,
            self.cap, self.head, 0, stamp, np.zeros(self.net.ports, np.int32),
            np.int64(changed), np.full((1, L.N_M), -1, np.int64),
        )  # fmt: skip
        return tuple(int(x) for x in got)


def _blocked_head() -> tuple[Switch0, int, int]:
    """A head whose two minimal ports (local ``a`` and ``b``, one per dimension) are
    both busy until ``T + 9``, after its failed full evaluation at ``T``."""
    sw = Switch0()
    target = next(s for s in range(16) if all(sw.net.coords[s] != sw.net.coords[0]))
    a, b = (int(sw.net.dim_base[d]) + int(sw.net.coords[target, d]) - 1 for d in range(2))
    sw.packet(target * 4)
    sw.xout_busy[[a, b]] = T + 9
    assert sw.route(T) == (-1, -1, 0)
    return sw, a, b


def test_a_failed_full_evaluation_keeps_the_class_and_minimal_ports() -> None:
    sw, a, b = _blocked_head()
    assert sw.head[0, L.H_MIN] == (1 << a) | (1 << b)
    vcs = int(sw.head[0, L.H_VCS])
    assert 0 <= vcs & 0xFFFFFFFF < vcs >> 32 <= sw.vt
    assert sw.head[0, L.H_TIED] == (1 << a) | (1 << b)
    assert sw.head[0, L.H_FLOOR] == L.NO_COST  # MIN: no candidate outside the tied set


def test_a_check_gives_the_full_verdict_without_reading_the_packet() -> None:
    sw, a, _ = _blocked_head()
    sw.pk[0] = -7  # a packet record the check must not read
    assert sw.route(T + 1, changed=1 << a) == (-1, -1, 0)  # changed, still busy: fails for sure
    sw.xout_busy[a] = T + 2
    assert sw.route(T + 2, changed=1 << a) == (-2, -1, 0)  # free now: evaluate in full


def test_a_kept_record_is_not_used_for_a_head_that_failed_elsewhere() -> None:
    sw, _, _ = _blocked_head()
    eject = sw.net.net_ports  # the next head ejects at switch 0 and finds its port busy
    sw.packet(0)
    sw.xout_busy[eject] = T + 9
    assert sw.route(T) == (-1, -1, 0)
    assert sw.head[0, L.H_VCS] == -1
    # its check reads the packet again: with its ejection port changed and free it may go
    sw.xout_busy[eject] = T
    assert sw.route(T + 1, changed=1 << eject) == (eject, 0, 0)


def _record(sw: Switch0) -> tuple[int, int, int, int]:
    """What a failure leaves: lowest cost, tied set, wake-up, bound on the others."""
    h = sw.head[0]
    return int(h[L.H_COST]), int(h[L.H_TIED]), int(h[L.H_WAKE]), int(h[L.H_FLOOR])


def _load(sw: Switch0, port: int, packets: int) -> None:
    """``packets`` of the downstream input buffers of output ``port`` not credited back."""
    down = int(sw.net.out_down_in[port]) * sw.vt
    sw.credits[down:down + sw.vt] = sw.cap - packets


def test_a_check_decides_a_cheaper_busy_port_as_a_full_evaluation_would() -> None:
    """Engine 2.3: a changed port that undercuts the tied set but cannot take the
    packet makes the failure certain; the check records the new lowest cost, tied
    set and wake-up instead of asking for a full evaluation."""
    sw, a, b = _blocked_head()
    _load(sw, a, 2)
    _load(sw, b, 3)
    assert sw.route(T) == (-1, -1, 0)  # full: a is the cheaper, both busy
    assert sw.head[0, L.H_TIED] == 1 << a
    _load(sw, b, 0)  # b frees its downstream buffers but its crossbar output stays busy
    assert sw.route(T + 1, changed=1 << b) == (-1, -1, 0)
    checked = _record(sw)
    assert checked[1] == 1 << b and checked[2] == T + 9
    assert sw.route(T + 1) == (-1, -1, 0)  # a full evaluation of the same state
    assert _record(sw) == checked


def test_a_min_check_decides_when_every_tied_port_got_dearer() -> None:
    """Engine 2.4: a MIN head has no candidate outside its tied set (the bound is
    ``NO_COST``), so dearer tied ports still leave the lowest cost known."""
    sw, a, b = _blocked_head()
    _load(sw, a, 1)
    _load(sw, b, 2)
    assert sw.route(T + 1, changed=(1 << a) | (1 << b)) == (-1, -1, 0)
    checked = _record(sw)
    assert checked[1] == 1 << a
    assert sw.route(T + 1) == (-1, -1, 0)
    assert _record(sw) == checked


def _blocked_omniwar_head() -> tuple[Switch0, int]:
    """An Omni-WAR head whose only minimal port ``a`` (one dimension left) is busy
    until ``T + 9``; its four non-minimal ports are free but cost the deroute penalty."""
    sw = Switch0("omniwar")
    target = next(s for s in range(1, 16) if sw.net.coords[s, 1] == sw.net.coords[0, 1])
    a = int(sw.net.dim_base[0]) + int(sw.net.coords[target, 0]) - 1
    sw.packet(target * 4)
    sw.xout_busy[a] = T + 9
    assert sw.route(T) == (-1, -1, 0)
    assert sw.head[0, L.H_TIED] == 1 << a
    assert sw.head[0, L.H_FLOOR] == L.DEROUTE_PENALTY
    return sw, a


def test_an_omniwar_check_decides_a_dearer_tied_port_below_the_bound() -> None:
    """The other ports cost at least ``H_FLOOR``: a tied port that got dearer but
    stays below it is still the cheapest, and its failure is certain."""
    sw, a = _blocked_omniwar_head()
    packets = (L.DEROUTE_PENALTY - 1) // int(sw.prm[9])  # the most that stays below the bound
    _load(sw, a, packets)
    assert sw.route(T + 1, changed=1 << a) == (-1, -1, 0)
    checked = _record(sw)
    assert checked == (packets * int(sw.prm[9]), 1 << a, T + 9, L.DEROUTE_PENALTY)
    assert sw.route(T + 1) == (-1, -1, 0)
    assert _record(sw) == checked


def test_an_omniwar_check_asks_for_a_full_evaluation_at_the_bound() -> None:
    """At the bound an unchanged port may tie (here four free ones do): in full."""
    sw, a = _blocked_omniwar_head()
    _load(sw, a, L.DEROUTE_PENALTY // int(sw.prm[9]))
    assert sw.route(T + 1, changed=1 << a) == (-2, -1, 0)
    assert sw.route(T + 1)[0] not in (-1, a)  # a full evaluation takes a deroute


def test_at_its_wake_up_a_check_records_the_next_one() -> None:
    """A check at a head's wake-up (as the loop makes for an Omni-WAR head) whose
    tied ports stayed busy (their crossbar outputs were granted again) records
    the new wake-up, not the one just passed."""
    sw, a, b = _blocked_head()
    assert sw.head[0, L.H_WAKE] == T + 9
    sw.xout_busy[[a, b]] = T + 15
    assert sw.route(T + 9, changed=(1 << a) | (1 << b)) == (-1, -1, 0)
    assert sw.head[0, L.H_WAKE] == T + 15
