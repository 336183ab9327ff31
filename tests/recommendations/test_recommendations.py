"""Per-job recommendations: ranking, spares, caching, deadline, accept."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.utils import timezone

from allocation.api.serializers.jobs import JobCreateSerializer
from allocation.models import Allocation, Job
from allocation.services import jobs, machines
from recommendations import constants as recommendation_constants
from recommendations import services as recommendations
from recommendations.api.serializers import RecommendationRequestSerializer
from recommendations.models import PolicyPrediction, Recommendation
from simulation.engine.config import study_message_packets

pytestmark = pytest.mark.django_db

#: One candidate (and one prediction) per policy of the registry.
N_POLICIES = len(jobs.ONLINE_POLICIES)

SPARES = {"p_abn": 0.026, "alpha_abn": 3.53, "t_bench": 0.0167}


@pytest.fixture
def ref(db, users):
    """The reference 8x8, c = 8 machine, half full (four 64-node jobs)."""
    machine = machines.create_machine(name="ref", sides=[8, 8], concentration=8)
    for i, policy in enumerate(["row", "diagonal", "row", "diagonal"]):
        jobs.submit_job(owner=users["admin"], machine=machine, name=f"bg{i}", node_count=64,
                        pattern="all-to-all", policy=policy)
    return machine


def ask(api, role="operator", **body):
    payload = {"machine": "ref", "node_count": 64, "pattern": "all-to-all", "t_cmpt": 100,
               "t_comm": 50, **SPARES}
    payload.update(body)
    return api(role).post("/api/v1/recommendations/", payload, format="json")


def run_predictions(rec_id: int) -> None:
    for prediction in PolicyPrediction.objects.filter(recommendation_id=rec_id):
        recommendations.run_prediction(prediction.pk)


@pytest.mark.parametrize("role", [None, "viewer", "operator", "admin"])
def test_roles(api, ref, role):
    response = ask(api, role, simulate=False)
    assert response.status_code == {None: 401, "viewer": 403}.get(role, 200)
    if role in ("operator", "admin"):
        rec_id = response.json()["id"]
        assert api("viewer").get(f"/api/v1/recommendations/{rec_id}/").status_code == 200
        assert api("viewer").post(f"/api/v1/recommendations/{rec_id}/accept/").status_code \
            == 403


def test_analytic_ranking_is_immediate_complete_and_cached(api, ref):
    first = ask(api, simulate=False)
    assert first.status_code == 200, first.content
    body = first.json()
    assert body["status"] == "ready" and body["method"] == "analytic"
    ranked = [e["policy"] for e in body["ranking"]]
    assert len(ranked) == N_POLICIES and "least_loaded_diagonal" in ranked
    rec = body["recommended"]
    assert rec["policy"] == ranked[0] and rec["n_total"] == 64 + rec["n_spare"]
    assert rec["sbatch"][0] == f"#SBATCH --nodes={rec['n_total']}"
    assert rec["saving_vs_as_is"] > 1 and rec["saving_vs_default"] >= 1
    assert rec["reason"].startswith("Its 64 nodes ") and "partition bandwidth" in rec["reason"]
    again = ask(api, simulate=False).json()
    assert again["id"] == body["id"] and again["cached"] is True
    jobs.submit_job(owner=ref.jobs.first().owner, machine=ref, name="new", node_count=8,
                    pattern="uniform", policy="row")
    assert ask(api, simulate=False).json()["id"] != body["id"], "occupancy changed: no cache"


def test_repeated_answer_equals_the_stored_recommendation(api, ref):
    """Repeats are served from a rendered-answer cache: the body must be exactly the
    serializer's, and must follow the recommendation's progress and status."""
    first = ask(api).json()  # simulated: computing, 8 policies x 2 seeds pending
    assert first["status"] == "computing"
    PolicyPrediction.objects.filter(recommendation_id=first["id"]).update(status="running")
    Recommendation.objects.filter(pk=first["id"]).update(deadline=timezone.now() - timedelta(1))
    repeat = ask(api)  # past the deadline: answered analytically, ready, 0 of 8 done
    assert repeat.status_code == 200 and repeat["Content-Type"] == "application/json"
    detail = api("viewer").get(f"/api/v1/recommendations/{first['id']}/").json()
    assert repeat.json() == {**detail, "cached": True}
    assert ask(api).json() == repeat.json()  # served from the cache now
    # Late predictions finishing change the progress: the next repeat shows it.
    PolicyPrediction.objects.filter(recommendation_id=first["id"]).update(status="succeeded")
    later = ask(api).json()
    runs = N_POLICIES * len(recommendation_constants.prediction_seeds())
    assert later["progress"] == {"simulations": runs, "done": runs}
    assert later == {**api("viewer").get(f"/api/v1/recommendations/{first['id']}/").json(),
                     "cached": True}
    # Accepted, it is no longer the answer to the question: a new one is computed.
    assert api("operator").post(f"/api/v1/recommendations/{first['id']}/accept/").status_code \
        == 201
    assert ask(api, simulate=False).json()["id"] != first["id"]


def test_predictions_use_the_study_routing_and_volume(api, ref):
    """Omni-WAR, shared VCs, the study's kernel volume, several seeds."""
    rec_id = ask(api).json()["id"]
    prediction = PolicyPrediction.objects.filter(recommendation_id=rec_id).first()
    config = prediction.parameters
    assert (config["routing"], config["vc_sets"], config["scenario"]) == (
        "omniwar", "shared", "background")
    assert config["message_packets"] == study_message_packets("all2all", 64) == 16
    assert len(recommendation_constants.prediction_seeds()) >= 2


def test_simulated_ranking_replaces_the_analytic_one(api, ref, monkeypatch):
    """On the half-full reference machine the 64-node all-to-all gets a
    locality-aware policy unless the simulation shows a clear win, and every
    candidate without switch locality says why it was refused or kept."""
    monkeypatch.setattr(django_settings, "HX_PREDICTION_SEEDS", 1)  # one seed: test time
    response = ask(api)
    assert response.status_code == 202
    rec_id = response.json()["id"]
    assert response.json()["progress"]["simulations"] == N_POLICIES
    run_predictions(rec_id)
    body = api("viewer").get(f"/api/v1/recommendations/{rec_id}/").json()
    assert body["status"] == "ready" and body["method"] == "simulation", body["note"]
    assert body["progress"]["done"] == N_POLICIES
    simulated = [e for e in body["ranking"] if e.get("predicted_cycles")]
    assert len(simulated) == N_POLICIES
    assert "cycles" in body["recommended"]["reason"]
    # candidates the study's lessons refuse come last; each part is in cost order
    refused = [bool(e.get("refused")) for e in body["ranking"]]
    assert refused == sorted(refused)
    for part in (True, False):
        costs = [e["expected_cost"] for e in body["ranking"] if bool(e.get("refused")) == part]
        assert costs == sorted(costs)
    assert not body["recommended"]["reason"].count("Not recommended:")
    best = body["ranking"][0]
    spread = [e for e in body["ranking"] if not e["properties"]["switch_locality"]]
    assert {e["policy"] for e in spread} >= {"full_spread", "random_endpoint"}
    for entry in spread:  # 50 % held and whole free switches broken: two reasons
        assert "other jobs hold 50% of the machine" in entry["reason"]
        assert "whole free switches that later jobs could use whole" in entry["reason"]
        assert entry.get("refused") or "Recommended although" in entry["reason"]
    if not best["properties"]["switch_locality"]:
        assert "Recommended although" in best["reason"]  # a clear simulated win, said so
    else:
        faster = [e for e in spread if e["predicted_cycles"] < best["predicted_cycles"]]
        if faster:
            assert "which would cost less but" in body["recommended"]["reason"]


def test_overdue_simulations_fall_back_to_the_analytic_answer(api, ref):
    rec_id = ask(api).json()["id"]
    Recommendation.objects.filter(pk=rec_id).update(deadline=timezone.now() - timedelta(1))
    body = api("viewer").get(f"/api/v1/recommendations/{rec_id}/").json()
    assert body["status"] == "ready" and body["method"] == "analytic"
    assert "did not finish within 30 s" in body["note"]


def test_at_the_deadline_the_finished_simulations_rank(api, ref, monkeypatch):
    """Six of eight simulations finished, one is still running (its worker was
    killed) and one never started: the answer uses the six and says which two
    the analytic score stands in for; the one not started is cancelled."""
    monkeypatch.setattr(django_settings, "HX_PREDICTION_SEEDS", 1)  # test time
    rec_id = ask(api).json()["id"]
    predictions = list(PolicyPrediction.objects.filter(recommendation_id=rec_id)
                       .order_by("policy"))
    *finished, stuck, unstarted = predictions
    for prediction in finished:
        recommendations.run_prediction(prediction.pk)
    PolicyPrediction.objects.filter(pk=stuck.pk).update(status="running")
    Recommendation.objects.filter(pk=rec_id).update(deadline=timezone.now() - timedelta(1))
    body = api("viewer").get(f"/api/v1/recommendations/{rec_id}/").json()
    assert body["status"] == "ready" and body["method"] == "simulation", body["note"]
    simulated = {e["policy"] for e in body["ranking"] if e.get("predicted_cycles")}
    assert simulated == {p.policy for p in finished}
    assert body["note"] == (f"simulated: {', '.join(sorted(simulated))}; analytic score for "
                            f"{stuck.policy}, {unstarted.policy} (their simulations did not "
                            f"finish within 30 s)")
    assert PolicyPrediction.objects.get(pk=unstarted.pk).status == "cancelled"
    assert PolicyPrediction.objects.get(pk=stuck.pk).status == "running"  # left to its lease


def test_accept_allocates_primary_and_spares_once(api, ref):
    body = ask(api, simulate=False).json()
    response = api("operator").post(f"/api/v1/recommendations/{body['id']}/accept/", {},
                                    format="json")
    assert response.status_code == 201, response.content
    job = Job.objects.get(pk=response.json()["id"])
    n_spare = body["recommended"]["n_spare"]
    assert job.policy == body["recommended"]["policy"]
    assert Allocation.objects.filter(job=job, role="primary").count() == 64
    assert Allocation.objects.filter(job=job, role="spare").count() == n_spare
    again = api("operator").post(f"/api/v1/recommendations/{body['id']}/accept/", {},
                                 format="json")
    assert again.status_code == 409
    other = api("operator2").post(f"/api/v1/recommendations/{body['id']}/accept/", {},
                                  format="json")
    assert other.status_code == 404


@pytest.mark.parametrize(("body", "field"), [
    ({"node_count": 300}, "node_count"),
    ({"pattern": "gossip"}, "pattern"),
    ({"t_cmpt": 0}, "t_cmpt"),
    ({"t_comm": -5}, "t_comm"),
    ({"alpha_abn": 1.0}, "alpha_abn"),
    ({"p_abn": 2}, "p_abn"),
    ({"machine": "nope"}, "machine"),
])
def test_bad_requests_are_400(api, ref, body, field):
    response = ask(api, simulate=False, **body)
    assert response.status_code == 400, response.content
    assert field in response.json()["errors"]
    assert not Recommendation.objects.exists()



@pytest.mark.parametrize(("field", "value", "message"), [
    ("t_cmpt", 0, "must be a finite number > 0"),
    ("t_comm", -5, "must be finite and >= 0"),
    ("wall_time", 0, "must be a finite number > 0"),
])
def test_jobs_and_recommendations_refuse_times_alike(field, value, message):
    for serializer in (JobCreateSerializer, RecommendationRequestSerializer):
        form = serializer(data={field: value}, partial=True)
        assert not form.is_valid()
        assert form.errors[field] == [message], serializer.__name__
    form = RecommendationRequestSerializer(data={"t_bench": 0, "t_comm": 0}, partial=True)
    assert not form.is_valid()
    assert form.errors == {"t_bench": ["must be a finite number > 0"]}
