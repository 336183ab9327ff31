"""Hand-checked behaviour of the packet model: latency, kernels, conservation."""

from __future__ import annotations

import json

import numpy as np
import pytest

from simulation.engine import ENGINE_VERSION, SimConfig, simulate
from simulation.engine.kernels import KERNELS
from simulation.engine.network import build_network

from .conftest import run

P = 16


def zero_load(h: int, link: int = 1, router: int = 1, phits: int = P) -> int:
    """Zero-load latency over ``h`` switch hops (see SimConfig.router_latency)."""
    return (h + 1) * (router + link) + link + phits


def endpoint_at(sides: tuple, c: int, coords: tuple, local: int = 0) -> int:
    return int(np.ravel_multi_index(coords, sides)) * c + local


@pytest.mark.parametrize("routing", ["dor", "min", "omniwar"])
@pytest.mark.parametrize(
    ("sides", "dst", "h"),
    [((4, 4), (0, 0), 0), ((4, 4), (0, 3), 1), ((4, 4), (2, 3), 2), ((3, 3, 3), (1, 2, 2), 3)],
)
@pytest.mark.parametrize(("link", "router"), [(1, 1), (3, 2)])
def test_zero_load_latency_is_exact(
    routing: str, sides: tuple, dst: tuple, h: int, link: int, router: int
) -> None:
    """One packet each way between two endpoints ``h`` switch hops apart.

    The packet crosses the injection link (``L``), ``h + 1`` routers (``R``
    each: crossbar grant to link start), ``h`` network links (``L`` each) and
    the ejection link (``L``), and is delivered when its last phit arrives,
    ``P`` cycles after its head: ``(h + 1) (R + L) + L + P``.  With L = R = 1
    and P = 16 that is 19, 21, 23 and 25 cycles for h = 0..3.  The two
    packets use opposite link directions, so they never meet.
    """
    c = 2
    a = endpoint_at(sides, c, (0,) * len(sides))
    b = endpoint_at(sides, c, dst, local=1)
    res = run(
        [[a, b]], sides=sides, concentration=c, ranks=2, routing=routing, vcs=2 * len(sides),
        packets_per_task=1, link_latency=link, router_latency=router, max_cycles=5000,
    )  # fmt: skip
    app = res.apps[0]
    assert res.completed and app.packets == 2
    assert app.latency_mean == app.latency_max == zero_load(h, link, router)
    assert res.phit_hops == 2 * h * P


def test_valiant_zero_load_latency_bounds() -> None:
    """Valiant goes through a random switch: at light load its mean latency
    lies between the minimal one (1 hop) and that of ``2 q = 4`` hops, and
    its mean hop count exceeds the minimal distance 1."""
    sides, c = (4, 4), 2
    a, b = endpoint_at(sides, c, (0, 0)), endpoint_at(sides, c, (0, 1))
    res = run(
        [[a, b]], sides=sides, concentration=c, ranks=2, routing="valiant", rate=0.05,
        packets_per_task=40, max_cycles=100_000,
    )  # fmt: skip
    app = res.apps[0]
    assert res.completed and app.packets == 80
    # a packet may also wait (< P cycles each) behind earlier ones at the source
    assert zero_load(1) < app.latency_mean < zero_load(4)
    assert res.phit_hops / P / 80 > 1.5


@pytest.mark.parametrize("m", [1, 3])
def test_allreduce_two_ranks_makespan(m: int) -> None:
    """Two ranks two hops apart: reduce-scatter then all-gather, one step each.

    Each step sends ``m`` packets back to back: the injection link takes a
    packet every ``P`` cycles, so the last one arrives ``(m - 1) P + Z``
    after the step starts (Z = zero-load latency = 23).  The all-gather step
    starts in the cycle the reduce-scatter data has arrived, hence a
    makespan of ``2 ((m - 1) P + Z)``: 46 for m = 1, 110 for m = 3.
    """
    sides, c = (4, 4), 4
    a, b = endpoint_at(sides, c, (0, 0)), endpoint_at(sides, c, (1, 2))
    res = run(
        [[a, b]], sides=sides, concentration=c, ranks=2, pattern="allreduce",
        message_packets=m, routing="min", max_cycles=5000,
    )  # fmt: skip
    assert res.makespan_cycles == 2 * ((m - 1) * P + zero_load(2))
    assert res.packets_delivered == 4 * m


def test_all2all_two_ranks_makespan() -> None:
    """One asynchronous step of 4 packets each way: ``3 P + Z`` = 48 + 21."""
    sides, c = (4, 4), 4
    a, b = endpoint_at(sides, c, (0, 0)), endpoint_at(sides, c, (0, 2))
    res = run(
        [[a, b]], sides=sides, concentration=c, ranks=2, pattern="all2all",
        message_packets=4, routing="dor", max_cycles=5000,
    )  # fmt: skip
    assert res.makespan_cycles == 3 * P + zero_load(1)


def test_allreduce_dependencies_serialise_steps() -> None:
    """With 16 ranks on 16 different switches, allreduce has 8 dependent
    steps, each at least a zero-load latency long (> 19 cycles); all2all
    over the same ranks has no dependencies but 15 x more packets."""
    sides, c = (4, 4), 4
    part = np.arange(16) * c
    kw = {"sides": sides, "concentration": c, "ranks": 16, "max_cycles": 50_000,
          "message_packets": 1}
    ar = run([part], pattern="allreduce", **kw)
    assert ar.completed and ar.makespan_cycles >= 8 * zero_load(0)
    assert ar.packets_delivered == 16 * 8
    a2a = run([part], pattern="all2all", **kw)
    assert a2a.completed and a2a.packets_delivered == 16 * 15


@pytest.mark.parametrize(
    ("pattern", "wrap", "total"),
    [
        ("all2all", False, 32 * 2 * 31),
        ("allreduce", False, 32 * 2 * (2 + 1 + 1 + 1 + 1)),
        # 32 ranks on an 8 x 4 grid: 7 x 4 + 8 x 3 = 52 edges, each way, 2 packets
        ("stencil4", False, 2 * 2 * 52),
        ("stencil4", True, 32 * 4 * 2),
        # plus 2 x 7 x 3 = 42 diagonal edges
        ("stencil8", False, 2 * 2 * (52 + 42)),
        ("stencil8", True, 32 * 8 * 2),
    ],
)
@pytest.mark.parametrize("routing", ["dor", "min", "valiant", "omniwar"])
def test_kernels_complete_and_conserve(pattern: str, wrap: bool, total: int,
                                       routing: str) -> None:
    """Every packet of a kernel (message_packets = 2) is delivered exactly once.

    Allreduce halves its messages: sizes 2, 1, 1, 1, 1 then back, 12 per rank.
    Without wrap-around (the study's stencils) border ranks have fewer
    neighbours; with it every rank has 4 or 8.
    """
    res = run(
        [np.arange(0, 64, 2)], sides=(4, 4), concentration=4, ranks=32, pattern=pattern,
        message_packets=2, routing=routing, max_cycles=200_000, stencil_wrap=wrap,
    )  # fmt: skip
    assert res.completed
    assert res.packets_delivered == res.packets_injected == total
    assert res.packets_in_flight == 0
    assert res.apps[0].completion_cycles == res.makespan_cycles == res.cycles - 1


def test_a_stencil_runs_its_longer_side_first() -> None:
    """The study's simulator lists a stencil's longer side first, and its first
    coordinate runs fastest: 128 ranks are 16 wide and 8 high, so rank 0's von
    Neumann neighbours are ranks 1 and 16, and rank 15 ends its row."""
    msgs = KERNELS["stencil4"].messages(128, 1, np.random.default_rng(0), False)
    assert sorted(d for d, _, _ in msgs[0]) == [1, 16]
    assert sorted(d for d, _, _ in msgs[15]) == [14, 31]
    assert sorted(d for d, _, _ in msgs[127]) == [111, 126]


def test_random_involution_odd_ranks() -> None:
    """With 7 ranks three pairs exchange and one rank idles: 6 messages."""
    res = run([np.arange(7)], sides=(2, 2), concentration=2, ranks=7,
              pattern="random_involution", message_packets=3, max_cycles=10_000)
    assert res.completed and res.packets_delivered == 18


def test_open_loop_conservation_mid_run(small: dict) -> None:
    """Stopped at saturation, every injected packet is delivered or in flight."""
    res = run(**small, pattern="uniform", rate=1.0, max_cycles=3000, warmup_cycles=1000)
    assert res.packets_in_flight > 0
    assert res.packets_injected == res.packets_delivered + res.packets_in_flight
    assert res.packets_dropped > 0 and res.offered > res.throughput


def test_determinism_and_seed(small: dict) -> None:
    kw = dict(small, pattern="uniform", rate=0.6, max_cycles=2000, routing="omniwar")
    a = run(**kw).as_dict()
    b = run(**kw).as_dict()
    assert a == b
    c = run(**dict(kw, seed=1)).as_dict()
    assert c["packets_injected"] != a["packets_injected"]


def test_result_is_json_ready_and_native(small: dict) -> None:
    res = run(**small, pattern="permutation", rate=0.3, max_cycles=1500, warmup_cycles=500)
    d = res.as_dict()
    json.dumps(d)
    assert d["engine_version"] == ENGINE_VERSION
    assert type(d["throughput"]) is float and type(d["phit_hops"]) is int
    assert d["measure_from"] == 500 and d["cycles"] == 1500
    net = build_network(small["sides"], small["concentration"])
    assert len(d["link_utilisation"]) == 16 * 6
    s, t, u = d["link_utilisation"][0]
    assert net.distance(s, t) == 1 and 0.0 <= u <= 1.0
    assert d["apps"][0]["partition"] == list(range(64))
    # accepted phits equal the phits counted on ejection; utilisation is
    # at most 1 and averages phit_hops / (links * cycles) over the window
    assert max(x[2] for x in d["link_utilisation"]) <= 1.0


def test_progress_callback_is_monotone(small: dict) -> None:
    seen: list[float] = []
    cfg = SimConfig(**small, pattern="uniform", rate=0.2, max_cycles=6000)
    simulate(cfg, [np.arange(64)], progress=seen.append)
    assert seen[-1] == 1.0 and seen == sorted(seen) and len(seen) >= 3


def test_partition_validation(small: dict) -> None:
    cfg = SimConfig(**small)
    with pytest.raises(ValueError, match="partitions"):
        simulate(cfg, [np.array([0, 64])])
    with pytest.raises(ValueError, match="partitions"):
        simulate(cfg, [np.array([0, 1, 1])])


@pytest.mark.parametrize("reserved", [True, False], ids=["in-place", "copying"])
def test_packet_pool_growth_is_transparent(small: dict, monkeypatch: pytest.MonkeyPatch,
                                           reserved: bool) -> None:
    """Starting with an almost empty packet pool forces many doublings
    mid-run, inside its reservation or (with none, as when the host refuses
    one) by copying; the result is identical to a run with a large pool."""
    import simulation.engine.simulator as sim_mod

    kw = dict(small, pattern="uniform", rate=1.0, max_cycles=3000, routing="min")
    big = run(**kw).as_dict()
    monkeypatch.setattr(sim_mod, "initial_pool_packets", lambda ranks, endpoints: ranks + 2)
    if not reserved:
        monkeypatch.setattr(sim_mod, "pool_reservation", lambda estimate, limit: 0)
    assert run(**kw).as_dict() == big
