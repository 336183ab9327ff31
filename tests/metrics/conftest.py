"""A small portal with something for every metric family."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone

from allocation.models import SlurmLink
from allocation.services import jobs, machines
from health import services as health
from health.models import Estimate
from recommendations import services as recommendations
from recommendations.models import Recommendation

SLOW = ("n05", "n09")


def upload_rounds(machine, user, rounds: int = 3) -> None:
    """Fleet-wide rounds in which the SLOW nodes are 30 % slower each time."""
    for r in range(rounds):
        rng = np.random.default_rng(r)
        health.ingest_payload({"machine": machine.name, "benchmark": "stream", "results": [
            {"node": f"n{i:02d}",
             "seconds": (1.3 if f"n{i:02d}" in SLOW else 1.0)
             * float(np.exp(0.003 * rng.standard_normal()))} for i in range(1, 65)]},
            user=user)


@pytest.fixture
def portal(db, users, machine):
    """Machine m4 (64 nodes on 16 switches of 4): a job on 4 nodes, n64 drained, an
    estimate, two recommendations (one accepted), a failing Slurm link."""
    owner = users["operator"]
    job = jobs.submit_job(owner=owner, machine=machine, name="j", node_count=4,
                          pattern="uniform", policy="row")
    machines.set_node_state(machine, "n64", "drained", "bad DIMM")
    now = timezone.now()
    Estimate.objects.create(
        machine=machine, benchmark="stream", window_start=now - timedelta(days=30),
        window_end=now - timedelta(hours=1), created_at=now - timedelta(hours=1), runs=192,
        abnormal_runs=5, jobs=4, t_bench=0.0167, alpha_abn=3.53, alpha_abn_low=3.1,
        alpha_abn_high=4.0, p_abn=0.026,
        p_abn_low=0.0085, p_abn_high=0.0597)
    Estimate.objects.create(  # an older estimate of the same benchmark is not shown
        machine=machine, benchmark="stream", window_start=now - timedelta(days=60),
        window_end=now - timedelta(days=2), created_at=now - timedelta(days=2), runs=10,
        abnormal_runs=0, jobs=1, t_bench=0.02, alpha_abn=None, p_abn=0.0, p_abn_low=0.0,
        p_abn_high=0.3)
    rec, _ = recommendations.request_recommendation(
        user=owner, machine=machine, node_count=4, pattern="uniform", t_cmpt=10, t_comm=1,
        p_abn=0.01, alpha_abn=2.0, t_bench=0.1, simulate=False)
    Recommendation.objects.filter(pk=rec.pk).update(
        created_at=now - timedelta(seconds=40), finished_at=now - timedelta(seconds=37))
    other, _ = recommendations.request_recommendation(
        user=owner, machine=machine, node_count=8, pattern="uniform", t_cmpt=10, t_comm=1,
        p_abn=0.01, alpha_abn=2.0, t_bench=0.1, simulate=False)
    Recommendation.objects.filter(pk=other.pk).update(
        status="accepted", created_at=now - timedelta(seconds=20),
        finished_at=now - timedelta(seconds=19.5))
    SlurmLink.objects.create(machine=machine, enabled=True,
                             last_success_at=now - timedelta(seconds=90),
                             last_error="slurmctld unreachable at localhost:17000 (sinfo)",
                             consecutive_failures=2, failures_total=5, syncs_total=12,
                             last_duration_seconds=0.4)
    return {"machine": machine, "job": job, "now": now}
