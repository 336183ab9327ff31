"""Identical questions from different users share the computation, never the row.

Bob asking Alice's exact question gets his own recommendation (his name, his
external id, his id in the batch lines) whose ranking reuses Alice's computed
one; with ``HX_PRIVATE_DATA`` on, nothing of Alice's row reaches Bob at all.
"""

from __future__ import annotations

import json

import pytest
from django.conf import settings as django_settings

from allocation.services import jobs
from recommendations import constants as recommendation_constants
from recommendations.models import PolicyPrediction, Recommendation
from tests.recommendations.test_recommendations import (  # noqa: F401 (fixture)
    ask,
    ref,
    run_predictions,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("ref")]

#: One candidate (and one prediction) per policy of the registry.
N_POLICIES = len(jobs.ONLINE_POLICIES)

ALICE = {"name": "alice-job", "external_id": "A-1"}
BOB = {"name": "bob-job", "external_id": "B-2"}
#: What the requester owns: never another user's.
OWN_FIELDS = ("id", "url", "user", "name", "external_id", "created_at", "job", "accepted_at")


def _without(body: dict, *keys: str) -> dict:
    return {k: v for k, v in body.items() if k not in keys}


def test_another_users_identical_question_gets_their_own_row(api):
    alice = ask(api, "operator", simulate=False, **ALICE).json()
    response = ask(api, "operator2", simulate=False, **BOB)
    assert response.status_code == 200, response.content
    bob = response.json()
    assert bob["id"] != alice["id"]
    assert (bob["user"], bob["name"], bob["external_id"]) == ("operator2", "bob-job", "B-2")
    assert bob["cached"] is True  # the computation was reused, not the row
    assert bob["ranking"] == alice["ranking"] and bob["status"] == "ready"
    assert f"#SBATCH --comment=hxportal-recommendation={bob['id']}" in \
        bob["recommended"]["sbatch"]
    assert _without(bob["recommended"], "sbatch") == _without(alice["recommended"], "sbatch")
    # Alice's row is untouched, and Bob accepts his own under his own name.
    assert Recommendation.objects.get(pk=alice["id"]).name == "alice-job"
    accepted = api("operator2").post(f"/api/v1/recommendations/{bob['id']}/accept/", {},
                                     format="json")
    assert accepted.status_code == 201, accepted.content
    assert (accepted.json()["name"], accepted.json()["external_id"]) == ("bob-job", "B-2")
    assert Recommendation.objects.get(pk=alice["id"]).status == "ready"


def test_the_same_users_repeat_with_another_name_is_a_new_row(api):
    first = ask(api, "operator", simulate=False, **ALICE).json()
    again = ask(api, "operator", simulate=False, **ALICE).json()
    assert again["id"] == first["id"] and again["cached"] is True
    renamed = ask(api, "operator", simulate=False, name="second", external_id="A-2").json()
    assert renamed["id"] != first["id"]
    assert (renamed["name"], renamed["external_id"]) == ("second", "A-2")


def test_a_shared_computation_still_running_finishes_for_both(api, monkeypatch):
    monkeypatch.setattr(django_settings, "HX_PREDICTION_SEEDS", 1)  # test time
    alice = ask(api, "operator", **ALICE).json()
    bob = ask(api, "operator2", **BOB)
    assert bob.status_code == 202, bob.content
    bob = bob.json()
    assert bob["id"] != alice["id"] and bob["status"] == "computing"
    assert bob["progress"] == {"simulations": N_POLICIES, "done": 0}
    assert PolicyPrediction.objects.count() == N_POLICIES, "one set of simulations for both"
    run_predictions(alice["id"])
    done = {who: api("viewer").get(f"/api/v1/recommendations/{rec['id']}/").json()
            for who, rec in (("alice", alice), ("bob", bob))}
    assert done["bob"]["status"] == done["alice"]["status"] == "ready"
    assert done["bob"]["method"] == "simulation"
    assert done["bob"]["ranking"] == done["alice"]["ranking"]
    assert done["bob"]["progress"] == {"simulations": N_POLICIES, "done": N_POLICIES}
    assert (done["bob"]["name"], done["bob"]["user"]) == ("bob-job", "operator2")


def test_private_data_shares_nothing_of_anothers_row(api, settings):
    settings.HX_PRIVATE_DATA = True
    alice = ask(api, "operator", **ALICE).json()
    response = ask(api, "operator2", **BOB)
    assert response.status_code == 202, response.content
    bob = response.json()
    assert bob["id"] != alice["id"] and bob["cached"] is False
    assert {k: bob[k] for k in ("user", "name", "external_id")} == {
        "user": "operator2", "name": "bob-job", "external_id": "B-2"}
    for field in (*OWN_FIELDS, "deadline"):
        if alice[field] is not None:
            assert bob[field] != alice[field], field
    text = json.dumps(bob)
    assert "alice-job" not in text and "A-1" not in text
    assert f"recommendation={alice['id']}" not in text
    # Bob's answer is computed for him: his own simulations, none of Alice's.
    assert PolicyPrediction.objects.filter(recommendation_id=bob["id"]).count() == \
        N_POLICIES * len(recommendation_constants.prediction_seeds())
    assert api("operator2").get(f"/api/v1/recommendations/{alice['id']}/").status_code == 404
