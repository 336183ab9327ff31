"""Scenarios: escalation, interference, VC sets, partitions from the allocator."""

from __future__ import annotations

import numpy as np
import pytest

from simulation.engine import SimConfig, simulate
from simulation.engine.config import POLICY_NAMES
from simulation.engine.scenarios import build_apps

from .conftest import run

SMALL = {"sides": (4, 4), "concentration": 4}


def hyperx():
    return pytest.importorskip("allocation.hyperx", reason="allocation.hyperx not available")


def test_interference_background_covers_the_rest() -> None:
    cfg = SimConfig(**SMALL, ranks=16, scenario="interference", vc_sets="per_partition")
    apps = build_apps(cfg, [np.arange(16)])
    assert [a.role for a in apps] == ["app", "background"]
    assert sorted(apps[1].endpoints.tolist()) == list(range(16, 64))
    assert [a.vc_set for a in apps] == [0, 1]
    assert apps[1].pattern == "permutation" and apps[1].packets_per_task is None


def test_interference_slows_the_target() -> None:
    """A target all2all sharing switches with a heavy background finishes
    later than alone (same partition: one endpoint per switch)."""
    part = np.arange(16) * 4
    kw = dict(SMALL, ranks=16, pattern="all2all", message_packets=2, routing="min",
              max_cycles=100_000)
    alone = run([part], **kw)
    noisy = run([part], scenario="interference", background_rate=0.9, **kw)
    assert alone.completed and noisy.completed
    assert noisy.makespan_cycles > alone.makespan_cycles
    bg = noisy.apps[1]
    assert bg.role == "background" and bg.completion_cycles is None and bg.packets > 0
    # whole-run figures are the target's only
    assert noisy.apps[0].throughput == pytest.approx(noisy.throughput)


def test_per_partition_vcs_remove_head_of_line_coupling() -> None:
    """With per-partition VC sets the run still conserves packets and uses
    V x (apps + background) VCs; results differ from shared VCs."""
    part = np.arange(16) * 4
    kw = dict(SMALL, ranks=16, pattern="stencil8", message_packets=4, scenario="interference",
              background_rate=0.8, max_cycles=100_000)
    shared = run([part], **kw)
    per = run([part], vc_sets="per_partition", **kw)
    assert shared.completed and per.completed
    assert shared.as_dict() != per.as_dict()
    assert per.packets_injected == per.packets_delivered + per.packets_in_flight


def test_escalation_replicas_each_complete() -> None:
    parts = [np.arange(16 * i, 16 * i + 16) for i in range(4)]
    res = run(parts, **SMALL, ranks=16, replicas=4, scenario="escalation", pattern="allreduce",
              message_packets=4, max_cycles=100_000)
    assert len(res.apps) == 4 and res.completed
    assert res.makespan_cycles == max(a.completion_cycles for a in res.apps)
    assert res.packets_delivered == 4 * 16 * 2 * (4 + 2 + 1 + 1)


def test_policy_names_match_the_allocation_engine() -> None:
    assert tuple(hyperx().ONLINE_POLICIES) == POLICY_NAMES


@pytest.mark.parametrize("policy", POLICY_NAMES[:7])
def test_escalation_with_static_partitions(policy: str) -> None:
    """On the study's 2D machine with c = n, partitions come from the static
    formulas and tile disjoint parts of the machine."""
    hx = hyperx()
    cfg = SimConfig(sides=(4, 4), concentration=4, ranks=16, replicas=4, scenario="escalation",
                    policy=policy, pattern="stencil4", max_cycles=50_000)
    res = simulate(cfg)
    assert res.completed and len(res.apps) == 4
    for i, app in enumerate(res.apps):
        assert app.policy == policy
        assert list(app.partition) == hx.static_partition(policy, 4, i, seed=0).tolist()
    all_eps = [e for a in res.apps for e in a.partition]
    assert sorted(all_eps) == list(range(64))


def test_own_policy_uses_the_online_allocator() -> None:
    """Our own policy has no formula: replicas come from the online allocator."""
    hx = hyperx()
    cfg = SimConfig(sides=(4, 4), concentration=4, ranks=16, replicas=2, scenario="escalation",
                    policy="least_loaded_diagonal", pattern="stencil4", max_cycles=50_000)
    res = simulate(cfg)
    assert res.completed and len(res.apps) == 2
    free = np.ones(64, dtype=bool)
    first = hx.allocate(hx.HyperX((4, 4), 4), free, "least_loaded_diagonal", 16)
    assert list(res.apps[0].partition) == first.tolist()


def test_single_with_online_allocator_on_3d() -> None:
    """Off the static case (3D machine) the online allocator places the job."""
    hyperx()
    cfg = SimConfig(sides=(3, 3, 2), concentration=2, ranks=12, policy="diagonal",
                    pattern="uniform", packets_per_task=3, rate=0.5, routing="omniwar", vcs=6,
                    max_cycles=50_000)
    res = simulate(cfg)
    assert res.completed and len(res.apps[0].partition) == 12
    assert res.packets_delivered == 36


def test_escalation_online_replicas_are_disjoint() -> None:
    hyperx()
    cfg = SimConfig(sides=(4, 4), concentration=4, ranks=20, replicas=3,
                    scenario="escalation", policy="random_endpoint", pattern="random_involution",
                    max_cycles=50_000)
    res = simulate(cfg)
    eps = [e for a in res.apps for e in a.partition]
    assert len(eps) == len(set(eps)) == 60 and res.completed


def test_progress_counts_the_job_not_the_background() -> None:
    """The background's deliveries never end, so they are not progress: a loaded run
    reports the share of its job's packets delivered (it reported 100 % from its first
    chunk, since the background's deliveries counted too)."""
    cfg = SimConfig(**SMALL, ranks=16, pattern="all2all", routing="omniwar",
                    scenario="interference", message_packets=48, max_cycles=200_000)
    seen: list[float] = []
    result = simulate(cfg, [np.arange(0, 64, 4)], progress=seen.append)
    assert result.completed and len(seen) >= 4
    assert seen == sorted(seen) and seen[-1] == 1.0
    assert 0 < seen[0] < 0.6 and seen[-3] < 1.0
