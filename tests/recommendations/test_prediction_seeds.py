"""Each (policy, seed) of a recommendation's live simulations is a task of its own, so
the seeds spread over the workers as the policies do; a policy ranks by simulation
only with every one of its seeds, by their mean."""

from __future__ import annotations

from datetime import timedelta
from itertools import product

import pytest
from django.conf import settings as django_settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from allocation.services import jobs, machines
from recommendations import services as recommendations
from recommendations.models import PolicyPrediction, Recommendation
from recommendations.services import predictions as prediction_service
from recommendations.services import seeds as seed_service

pytestmark = pytest.mark.django_db

SEEDS = (0, 1)


@pytest.fixture
def small(users, monkeypatch):
    """A 4x4, c = 4 machine with a quarter held by two jobs; two seeds per policy and
    no more (settling a split with more seeds: test_seed_settling.py)."""
    monkeypatch.setattr(django_settings, "HX_PREDICTION_SEEDS", len(SEEDS))
    monkeypatch.setattr(django_settings, "HX_PREDICTION_MAX_SEEDS", len(SEEDS))
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
    def run(policy, seed, status, cycles, completed=True):
        return PolicyPrediction(policy=policy, seed=seed, status=status,
                                result={"completion_cycles": cycles, "completed": completed})

    runs = [
        run("row", 0, "succeeded", 100), run("row", 1, "succeeded", 201),
        run("diagonal", 0, "succeeded", 90), run("diagonal", 1, "failed", None),
        run("l_shape", 0, "succeeded", 80), run("l_shape", 1, "succeeded", None, completed=False),
    ]
    assert prediction_service.policy_cycles(runs) == {"row": 150}
    assert seed_service.seed_cycles(runs) == {"row": {0: 100, 1: 201}}


def test_seed_rivals_are_the_policies_faster_than_the_fastest_at_some_seed():
    per_seed = {"a": {0: 100, 1: 120}, "b": {0: 90, 1: 150}, "c": {0: 130, 1: 110},
                "d": {0: 200, 1: 200}}
    assert seed_service.seed_rivals(per_seed) == ("a", {"b": [0], "c": [1]})
    caveat = seed_service.seed_caveat(per_seed)
    assert caveat.startswith("the seeds do not agree on the fastest: a is the fastest on "
                             "the mean of seeds 0, 1, but b at seed 0 and c at seed 1 were "
                             "faster"), caveat
    agreed = {"a": {0: 100, 1: 120}, "d": {0: 200, 1: 200}}
    assert seed_service.seed_rivals(agreed) == ("a", {})
    assert seed_service.seed_caveat(agreed) == ""
    assert seed_service.seed_caveat({"a": {0: 1}}) == ""


def _finish_with(rec: Recommendation, cycles: dict[str, dict[int, int]]) -> Recommendation:
    """Every prediction of ``rec`` succeeded with ``cycles[policy][seed]`` (others slow)."""
    for p in rec.predictions.all():
        done = cycles.get(p.policy, {}).get(p.seed, 5000 + 10 * p.seed)
        PolicyPrediction.objects.filter(pk=p.pk).update(
            status="succeeded", finished_at=timezone.now(),
            result={"completion_cycles": done, "completed": True, "cycles": done})
    prediction_service.finish_if_complete(rec.predictions.first())
    rec.refresh_from_db()
    return rec


def test_a_live_answer_says_when_its_seeds_disagree_on_the_fastest(users, small, client_for,
                                                                    api):
    rec = _finish_with(ask(users, small), {"random_endpoint": {0: 900, 1: 1000},
                                           "full_spread": {0: 1100, 1: 950}})
    assert rec.status == "ready" and rec.method == "simulation"
    assert ("the seeds do not agree on the fastest: random_endpoint is the fastest on the "
            "mean of seeds 0, 1, but full_spread at seed 1 was faster") in rec.note, rec.note
    entries = {e["policy"]: e for e in rec.ranking}
    assert entries["random_endpoint"]["seed_cycles"] == {"0": 900, "1": 1000}
    assert entries["full_spread"]["faster_than_fastest_at_seeds"] == [1]
    assert "At seed 1 it was faster than random_endpoint" in entries["full_spread"]["reason"]
    assert ("The seeds cannot order it against full_spread, faster than it at some seed."
            in entries["random_endpoint"]["reason"])
    assert "faster_than_fastest_at_seeds" not in entries["row"]
    assert entries["row"]["seed_cycles"] == {"0": 5000, "1": 5010}
    page = client_for("viewer").get(f"/recommendations/{rec.pk}/").content.decode()
    assert 'data-testid="seed-cycles">per seed 900 / 1,000</small>' in page
    assert 'data-testid="seed-rival">faster than the fastest at seed 1</small>' in page
    api_entry = next(e for e in api("viewer").get(f"/api/v1/recommendations/{rec.pk}/").json()[
        "ranking"] if e["policy"] == "full_spread")
    assert api_entry["faster_than_fastest_at_seeds"] == [1]
    assert api_entry["seed_cycles"] == {"0": 1100, "1": 950}


def test_a_live_answer_whose_seeds_agree_has_no_such_caveat(users, small):
    rec = _finish_with(ask(users, small), {"random_endpoint": {0: 900, 1: 1000},
                                           "full_spread": {0: 1100, 1: 1050}})
    assert rec.method == "simulation" and "seeds do not agree" not in rec.note
    assert not any("faster_than_fastest_at_seeds" in e for e in rec.ranking)


def test_a_site_can_ask_for_more_seeds(users, small, monkeypatch):
    """``HX_PREDICTION_SEEDS``: three seeds a policy, and the expected live time counts
    the runs they make."""
    two = ask(users, small).inputs["expected_live_seconds"]
    monkeypatch.setattr(django_settings, "HX_PREDICTION_SEEDS", 3)
    machine = machines.create_machine(name="small3", sides=[4, 4], concentration=4)
    for i, policy in enumerate(["row", "diagonal"]):
        jobs.submit_job(owner=users["admin"], machine=machine, name=f"bg{i}", node_count=8,
                        pattern="all-to-all", policy=policy)
    rec = ask(users, machine)
    assert {(p.policy, p.seed) for p in rec.predictions.all()} == set(
        product(jobs.ONLINE_POLICIES, (0, 1, 2)))
    assert rec.inputs["expected_live_seconds"] == pytest.approx(two * 3 / 2, rel=0.02)
