"""The memory estimate of a run: it counts the arrays the simulator makes, refuses
buffers that no machine could hold naming the field, and stays within a factor
of two of the peak resident memory that real runs reach (measured in a fresh
process, so nothing else in the test session counts)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from simulation.engine import SimConfig
from simulation.engine import simulator as sim
from simulation.engine.memory import (
    PACKET,
    MemoryLimitError,
    MemoryLimitReached,
    check_memory,
    estimate_memory,
    pool_reservation,
)
from simulation.engine.network import build_network
from simulation.engine.scenarios import build_apps, build_partitions
from simulation.engine.traffic import build_traffic
from simulation.presets import study_configs
from tests.conftest import skip_or_fail

ROOT = Path(__file__).resolve().parents[3]
GIB = 2**30

SHAPES = [
    {},
    {"sides": (4, 4, 4), "concentration": 2, "ranks": 64, "routing": "omniwar", "vcs": 6},
    {"sides": (6, 6), "concentration": 3, "ranks": 32, "scenario": "interference",
     "vc_sets": "per_partition", "input_buffer_packets": 33, "output_buffer_packets": 7,
     "source_queue_packets": 5, "link_latency": 40, "packet_phits": 8, "pattern": "stencil8"},
    {"sides": (4, 4), "concentration": 4, "ranks": 16, "scenario": "escalation", "replicas": 4,
     "vc_sets": "per_partition", "pattern": "allreduce"},
]


def _arrays(cfg: SimConfig) -> dict[str, int]:
    """Bytes of the simulator's own arrays for ``cfg`` (built, not run)."""
    net = build_network(cfg.sides, cfg.concentration)
    apps = build_apps(cfg, build_partitions(cfg))
    tr = build_traffic(apps, cfg.packet_phits, cfg.concentration, cfg.seed)
    vt = cfg.vcs * (max(a.vc_set for a in apps) + 1)
    state = sim._network_state(cfg, net, vt, tr.rank_ep)
    pool = sim._packet_pool(cfg, net, len(tr.rank_ep))
    queues = {"in_q", "out_q", "src_q", "cwheel", "cwheel_n", "dfifo"}
    return {
        "input buffers": state["in_q"].nbytes, "output buffers": state["out_q"].nbytes,
        "source queues": state["src_q"].nbytes,
        "event wheels": state["cwheel"].nbytes + state["dfifo"].nbytes,
        "ports and VCs": sum(v.nbytes for k, v in state.items() if k not in queues),
        "packet pool": pool["pk"].nbytes + pool["free_stack"].nbytes,
        "vcs": vt,
    }


@pytest.mark.parametrize("shape", SHAPES)
def test_estimate_counts_the_arrays_the_simulator_makes(shape):
    cfg = SimConfig(**shape)
    est = estimate_memory(cfg).as_dict()
    real = _arrays(cfg)
    assert real["vcs"] == cfg.total_vcs
    for part in ("input buffers", "output buffers", "source queues", "event wheels"):
        assert est[part] == real[part], part
    assert real["ports and VCs"] <= est["ports and VCs"] <= 2 * real["ports and VCs"]
    assert est["packet pool"] >= real["packet pool"]  # the pool only grows from there


def test_a_million_packet_buffer_is_refused_naming_the_field():
    with pytest.raises(MemoryLimitError) as info:
        check_memory(SimConfig(input_buffer_packets=1_000_000), GIB)
    assert info.value.fields == ("input_buffer_packets",)
    assert "21.0 GiB" in info.value.message and "1.0 GiB per run" in info.value.message
    with pytest.raises(MemoryLimitError) as both:
        check_memory(SimConfig(input_buffer_packets=1_000_000,
                               output_buffer_packets=1_000_000, max_cycles=20_000), GIB)
    assert set(both.value.fields) == {"input_buffer_packets", "output_buffer_packets"}


@pytest.mark.parametrize(("shape", "fields"), [
    ({"source_queue_packets": 10_000_000}, {"source_queue_packets"}),
    ({"link_latency": 1_000_000}, {"packet_phits", "link_latency"}),
    ({"packet_phits": 1_000_000}, {"packet_phits", "link_latency"}),
    ({"sides": (32, 32), "concentration": 16, "ranks": 16384, "vcs": 256},  # VC state
     {"sides", "concentration", "vcs"}),
])
def test_other_unbounded_sizes_are_refused_naming_what_to_shrink(shape, fields):
    with pytest.raises(MemoryLimitError) as info:
        check_memory(SimConfig(**shape), GIB)
    assert set(info.value.fields) == fields


def test_a_bound_on_packets_in_flight_alone_does_not_refuse_a_run():
    """Every buffer full would take this machine past the limit; no run comes near it
    (its pool is checked as it grows), so it is not refused before it starts."""
    cfg = SimConfig(sides=(32, 32), concentration=16, ranks=16384, vcs=64)
    est = check_memory(cfg, GIB)
    assert est.floor <= GIB < est.total
    assert est.pool.fields == ("input_buffer_packets", "output_buffer_packets",
                               "source_queue_packets", "vcs")


#: Saturated open-loop traffic into deep source queues: the packets in flight
#: outgrow the pool's first size (1,602 records) after about 3,500 cycles.
FLOODED = SimConfig(sides=(4, 4), concentration=4, ranks=64, rate=1.0,
                    source_queue_packets=200, max_cycles=6000)


def test_a_run_stops_when_its_packets_in_flight_fill_the_pool_the_limit_leaves():
    est = estimate_memory(FLOODED)
    limit = est.floor + 100 * PACKET  # room for 100 records over the first size
    assert pool_reservation(est, limit) == 1_702
    with pytest.raises(MemoryLimitReached) as info:
        sim.simulate(FLOODED, [np.arange(64)], memory_limit=limit)
    assert str(info.value).startswith("the run stopped at cycle ")
    assert "packets in flight fill its packet pool of 1,702 records (about " in str(info.value)
    assert str(info.value).endswith("past the limit of 2.4 MiB per run")
    unlimited = sim.simulate(FLOODED, [np.arange(64)])
    within = sim.simulate(FLOODED, [np.arange(64)], memory_limit=est.total)
    assert unlimited.as_dict() == within.as_dict()  # the limit changes nothing below it


def test_the_pool_grows_inside_its_reservation_without_a_copy():
    net = build_network(FLOODED.sides, FLOODED.concentration)
    est = estimate_memory(FLOODED)
    pool = sim._packet_pool(FLOODED, net, 64, pool_reservation(est, None))
    first = pool["pk"].shape[0]
    pool["pk"][first - 1, 0] = 7
    pool["st"][sim.L.S_FREE] = 0  # every record in use: the loop asks for more
    sim._grow(pool, est, 100, None)
    assert pool["pk"].shape[0] == 2 * first
    assert np.shares_memory(pool["pk"], pool["records"]) and pool["pk"][first - 1, 0] == 7
    stack = pool["free_stack"][: pool["st"][sim.L.S_FREE]]
    assert stack[-1] == first and sorted(stack) == list(range(first, 2 * first))


RESERVE = textwrap.dedent("""
    import json, sys
    from simulation.engine import SimConfig
    from simulation.engine import simulator as sim
    from simulation.engine.memory import estimate_memory, pool_reservation
    from simulation.engine.network import build_network
    def rss():
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    cfg = SimConfig.from_dict(json.loads(sys.argv[1]))
    net = build_network(cfg.sides, cfg.concentration)
    est = estimate_memory(cfg)
    before = rss()
    pool = sim._packet_pool(cfg, net, cfg.ranks, pool_reservation(est, None))
    print(json.dumps([pool["records"].nbytes, rss() - before]))
""")


def test_a_reserved_pool_costs_only_its_first_size():
    """A 65,536-node machine's pool reserves 13 million records (0.6 GiB); until
    packets fill them, the process holds only the first size (numpy's zeroed
    arrays leave untouched pages unmapped)."""
    if not os.path.exists("/proc/self/status"):
        skip_or_fail("needs Linux /proc/self/status to read the resident memory")
    config = {"sides": [16, 16, 16], "concentration": 16, "ranks": 1024}
    done = subprocess.run([sys.executable, "-c", RESERVE, json.dumps(config)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=True)
    reserved, resident = json.loads(done.stdout.split("\n")[-2])
    first = estimate_memory(SimConfig.from_dict(config)).pool_start
    assert reserved > 16 * first
    assert resident < 2 * first + 8 * 2**20, (reserved / 2**20, resident / 2**20)


def test_the_packet_pool_is_bounded_by_cycles_when_the_buffers_do_not_bound_it():
    short = SimConfig(ranks=512, input_buffer_packets=4096, output_buffer_packets=4096,
                      max_cycles=2_000)
    pool = next(p for p in estimate_memory(short).parts if p.name == "packet pool")
    assert pool.fields == ("max_cycles",)
    default, longer = SimConfig(), SimConfig(max_cycles=5_000_000)
    assert estimate_memory(default).total == estimate_memory(longer).total  # buffers bound it


def test_defaults_and_the_whole_study_fit_the_default_limit():
    check_memory(SimConfig(), GIB)
    check_memory(SimConfig(sides=(32, 32), concentration=16, ranks=16384), GIB)
    largest = max(estimate_memory(SimConfig.from_dict(config)).total
                  for scale in (1, 64) for _point, config in study_configs(scale))
    assert largest < GIB // 8


MEASURE = textwrap.dedent("""
    import ctypes, gc, json, sys
    import numpy as np
    from simulation.engine import SimConfig, simulate
    tiny = SimConfig(sides=(2, 2), concentration=2, ranks=8, rate=0.5, max_cycles=300)
    simulate(tiny, [np.arange(8)])  # load (or compile) the loop first
    gc.collect()
    ctypes.CDLL(None).malloc_trim(0)  # hand back what loading freed
    def status(key):
        for line in open("/proc/self/status"):
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # the peak (VmHWM) starts again from the resident size now
    start = status("VmRSS:")
    simulate(SimConfig.from_dict(json.loads(sys.argv[1])))
    print(json.dumps(status("VmHWM:") - start))
""")

#: Peak resident memory of the run alone, in a fresh process: ``VmHWM``, reset just
#: before it, not ``ru_maxrss``, which keeps the size of the parent (pytest, after
#: other simulations) that the child was forked from before ``exec``.
#:
#: Moderate runs of 20 to 100 MiB: deep buffers on the reference machine, the
#: largest portal machine at half load, and an all-reduce on 4,096 ranks.
MEASURED = [
    {"ranks": 512, "input_buffer_packets": 512, "output_buffer_packets": 512,
     "max_cycles": 3000},
    {"sides": [32, 32], "concentration": 16, "ranks": 16384, "rate": 0.5, "max_cycles": 300},
    {"sides": [16, 16], "concentration": 16, "ranks": 4096, "pattern": "allreduce",
     "message_packets": 2, "routing": "omniwar", "max_cycles": 50_000},
]


@pytest.mark.parametrize("config", MEASURED, ids=["deep-buffers", "32x32", "allreduce"])
def test_estimate_is_within_twice_the_measured_peak(config):
    if not os.access("/proc/self/clear_refs", os.W_OK):
        skip_or_fail("needs Linux /proc/self/clear_refs to measure a run's peak memory")
    done = subprocess.run([sys.executable, "-c", MEASURE, json.dumps(config)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=True)
    measured = json.loads(done.stdout.split()[-1])
    estimate = estimate_memory(SimConfig.from_dict(config)).total
    assert measured > 16 * 2**20, measured  # big enough to measure
    assert measured / 2 <= estimate <= 2 * measured, (estimate / 2**20, measured / 2**20)

