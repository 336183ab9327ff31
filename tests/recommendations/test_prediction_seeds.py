"""Each (policy, seed) of a recommendation's live simulations is a task of its own, so
the seeds spread over the workers as the policies do; a policy ranks by simulation
only with every one of its seeds, by their mean."""

from __future__ import annotations

from datetime import timedelta
from itertools import product

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from allocation.services import jobs, machines
from recommendations import constants as recommendation_constants
from recommendations import services as recommendations
from recommendations.models import PolicyPrediction, Recommendation
from recommendations.services import predictions as prediction_service

pytestmark = pytest.mark.django_db

SEEDS = (0, 1)


@pytest.fixture
def small(users, monkeypatch):
    """A 4x4, c = 4 machine with a quarter held by two jobs; two seeds per policy."""
    monkeypatch.setattr(recommendation_constants, "PREDICTION_SEEDS", SEEDS)
    machine = machines.create_machine(name="small", sides=[4, 4], concentration=4)
    for i, policy in enumerate(["row", "diagonal"]):
        jobs.submit_job(owner=users["admin"], machine=machine, name=f"bg{i}", node_count=8,
                        pattern="all-to-all", policy=policy)
    return machine


def ask(users, machine) -> Recommendation:
    rec, _ = recommendations.request_recommendation(
        user=users["operator"], machine=machine, node_count=16, pattern="all-to-all",
        t_cmpt=100.0, t_comm=50.0, p_abn=0.02, alpha_abn=3.0, t_bench=0.5)
    return rec


def test_one_prediction_per_policy_and_seed_each_with_its_seed(users, small):
    rec = ask(users, small)
    found = {(p.policy, p.seed): p.parameters["seed"] for p in rec.predictions.all()}
    assert set(found) == set(product(jobs.ONLINE_POLICIES, SEEDS))
    assert all(seed == parameter for (_, seed), parameter in found.items())
    assert recommendations.prediction_progress(rec) == {"simulations": 16, "done": 0}


def test_the_same_policy_and_seed_cannot_be_asked_twice(users, small):
    rec = ask(users, small)
    with pytest.raises(IntegrityError), transaction.atomic():
        PolicyPrediction.objects.create(recommendation=rec, policy="row", seed=1,
                                        user=users["operator"])


def test_a_policy_ranks_by_the_mean_of_its_seeds_and_only_with_all_of_them(users, small):
    """Every run but diagonal's seed 1 finishes; at the deadline the others rank by
    the mean of their two seeds, and diagonal (one seed in) stands in analytically."""
    rec = ask(users, small)
    missing = rec.predictions.get(policy="diagonal", seed=1)
    for prediction in rec.predictions.exclude(pk=missing.pk):
        recommendations.run_prediction(prediction.pk)
    Recommendation.objects.filter(pk=rec.pk).update(deadline=timezone.now() - timedelta(1))
    recommendations.expire_overdue()
    rec.refresh_from_db()
    assert rec.status == "ready" and rec.method == "simulation", rec.note
    per_seed: dict[str, list[int]] = {}
    for p in rec.predictions.filter(status="succeeded"):
        per_seed.setdefault(p.policy, []).append(p.result["completion_cycles"])
    assert len(per_seed["diagonal"]) == 1
    assert all(p.result["cpu_seconds"] > 0 for p in rec.predictions.filter(status="succeeded"))
    ranked = {e["policy"]: e.get("predicted_cycles") for e in rec.ranking if "error" not in e}
    for policy, cycles in per_seed.items():
        if policy != "diagonal":
            assert len(cycles) == 2
            assert ranked[policy] == round(sum(cycles) / 2)
    assert "analytic score for diagonal" in rec.note
    assert PolicyPrediction.objects.get(pk=missing.pk).status == "cancelled"


def test_policy_cycles_needs_every_seed_completed():
    def run(policy, status, cycles, completed=True):
        return PolicyPrediction(policy=policy, status=status,
                                result={"completion_cycles": cycles, "completed": completed})

    cycles = prediction_service.policy_cycles([
        run("row", "succeeded", 100), run("row", "succeeded", 201),
        run("diagonal", "succeeded", 90), run("diagonal", "failed", None),
        run("l_shape", "succeeded", 80), run("l_shape", "succeeded", None, completed=False),
    ])
    assert cycles == {"row": 150}
