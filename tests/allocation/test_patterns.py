"""One vocabulary of communication patterns (the simulator's), hyphenated aliases read."""

from __future__ import annotations

import importlib

import pytest
from django.db import connection
from django.db.migrations.loader import MigrationLoader

from allocation.models import Job
from allocation.services import jobs
from recommendations.models import Recommendation
from simulation.engine import SimConfig

pytestmark = pytest.mark.django_db

ALIASES = [("all-to-all", "all2all"), ("all-reduce", "allreduce"), ("stencil-4", "stencil4"),
           ("stencil-8", "stencil8"), ("random-involution", "random_involution")]


@pytest.mark.parametrize(("alias", "name"), ALIASES)
def test_the_job_api_reads_an_alias_and_answers_the_name(api, machine, alias, name):
    response = api("operator").post("/api/v1/jobs/", {
        "machine": machine.name, "name": "j", "node_count": 4, "pattern": alias},
        format="json")
    assert response.status_code == 201, response.content
    assert response.json()["pattern"] == name
    assert Job.objects.get(pk=response.json()["id"]).pattern == name


def test_an_unknown_pattern_is_still_refused_naming_the_field(api, machine):
    response = api("operator").post("/api/v1/jobs/", {
        "machine": machine.name, "name": "j", "node_count": 4, "pattern": "gossip"},
        format="json")
    assert response.status_code == 400 and "pattern" in response.json()["errors"]


def test_recommendations_and_simulations_share_the_vocabulary(api, machine):
    response = api("operator").post("/api/v1/recommendations/", {
        "machine": machine.name, "node_count": 8, "pattern": "stencil-4", "t_cmpt": 10,
        "simulate": False}, format="json")
    assert response.status_code in (200, 202), response.content
    assert response.json()["pattern"] == "stencil4"
    assert SimConfig.from_dict({"pattern": "all-to-all"}).pattern == "all2all"
    run = api("operator").post("/api/v1/simulation-runs/", {"config": {
        "sides": [2, 2], "concentration": 2, "ranks": 8, "pattern": "all-to-all",
        "message_packets": 1, "max_cycles": 5000}}, format="json")
    assert run.status_code == 202, run.content
    assert run.json()["config"]["pattern"] == "all2all"


def test_the_migration_renames_stored_rows_both_ways(users, machine):
    migration = importlib.import_module("allocation.migrations.0009_one_pattern_vocabulary")
    # the models as the migration saw them (Recommendation was in allocation then)
    apps = MigrationLoader(connection).project_state(
        ("allocation", "0009_one_pattern_vocabulary")).apps
    job = jobs.create_job(owner=users["operator"], machine=machine, name="j", node_count=4,
                          pattern="all2all")
    Job.objects.filter(pk=job.pk).update(pattern="stencil-8")
    migration.forward(apps, None)
    assert Job.objects.get(pk=job.pk).pattern == "stencil8"
    migration.backward(apps, None)
    assert Job.objects.get(pk=job.pk).pattern == "stencil-8"
    assert Recommendation.objects.count() == 0  # the rename touches both tables
