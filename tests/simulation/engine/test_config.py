"""Validation and serialisation of SimConfig."""

from __future__ import annotations

import json

import pytest

from simulation.engine import ENGINE_VERSION, SimConfig
from simulation.engine.config import required_vcs


def test_defaults_are_the_study_settings() -> None:
    cfg = SimConfig()
    assert (cfg.sides, cfg.concentration, cfg.endpoints) == ((8, 8), 8, 512)
    assert (cfg.packet_phits, cfg.vcs, cfg.speedup) == (16, 4, 2)
    assert (cfg.input_buffer_packets, cfg.output_buffer_packets) == (8, 4)
    assert cfg.allocator == "random"
    # the faithful study mode (docs/domain.md section 6.7)
    assert (cfg.background_rate, cfg.message_packets, cfg.kernel_message_packets) == (
        1.0, 0, 1)  # uniform: one-packet messages
    assert SimConfig(pattern="all2all").kernel_message_packets == 16
    assert (cfg.all2all_schedule, cfg.stencil_wrap, cfg.occupancy, cfg.port_choice) == (
        "rounds", False, "port_vc", "wait")
    assert ENGINE_VERSION == "2.4"


def test_round_trip_through_json() -> None:
    cfg = SimConfig(sides=(4, 4, 2), concentration=2, routing="omniwar", vcs=6, ranks=32)
    again = SimConfig.from_dict(json.loads(json.dumps(cfg.to_dict())))
    assert again == cfg


def test_unknown_keys_are_named() -> None:
    with pytest.raises(ValueError, match="colour, size"):
        SimConfig.from_dict({"size": 1, "colour": "red"})


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        ({"ranks": 513}, "ranks"),
        ({"scenario": "escalation", "replicas": 9}, "replicas"),
        ({"pattern": "allreduce", "ranks": 48}, "ranks"),
        ({"routing": "omniwar", "vcs": 3}, "vcs"),
        ({"routing": "min", "sides": (4, 4, 4), "concentration": 4, "vcs": 2}, "vcs"),
        ({"max_cycles": 10**9}, "max_cycles"),
        ({"sides": (16, 16, 16), "concentration": 17}, "sides"),
        ({"rate": 1.5}, "rate"),
        ({"rate": 0}, "rate"),
        ({"routing": "ugal"}, "routing"),
        ({"pattern": "tornado"}, "pattern"),
        ({"policy": "nope"}, "policy"),
        ({"packet_phits": 0}, "packet_phits"),
        ({"warmup_cycles": 100, "max_cycles": 100}, "warmup_cycles"),
        ({"packets_per_task": 0}, "packets_per_task"),
        ({"pattern": "switch_permutation", "ranks": 60}, "ranks"),
        ({"sides": (0, 4)}, "sides"),
    ],
)
def test_invalid_values_name_the_field(kw: dict, field: str) -> None:
    with pytest.raises(ValueError, match=f"^{field}:"):
        SimConfig.from_dict(kw)


def test_required_vcs() -> None:
    assert [required_vcs(r, 3) for r in ("dor", "min", "valiant", "omniwar")] == [1, 3, 2, 6]


def test_per_partition_vc_sets_count() -> None:
    cfg = SimConfig(scenario="escalation", replicas=4, vc_sets="per_partition")
    assert cfg.total_vcs == 16
    cfg = SimConfig(scenario="interference", vc_sets="per_partition")
    assert cfg.total_vcs == 8
