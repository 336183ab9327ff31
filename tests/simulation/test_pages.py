"""The simulation pages through Django's test client (the browser test drives them too)."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.test import Client

from hxportal.models import RunStatus
from simulation import services
from simulation.models import SimulationRun, Sweep
from tests.simulation.conftest import TINY, run_pending

pytestmark = pytest.mark.django_db


def test_pages_need_sign_in_and_roles(client_for):
    assert Client().get("/simulation/").status_code == 302
    viewer = client_for("viewer")
    assert viewer.get("/simulation/").status_code == 200
    assert viewer.get("/simulation/sweeps/").status_code == 200
    assert viewer.get("/simulation/runs/new/").status_code == 403
    assert viewer.post("/simulation/sweeps/study/", {"scale": 1}).status_code == 403
    page = client_for("operator").get("/simulation/runs/new/")
    assert page.status_code == 200
    assert b'data-validate-url="/api/v1/simulation-runs/validate/"' in page.content
    assert b"<script>" not in page.content and b' style="' not in page.content


def test_run_form_starts_a_run_and_shows_errors(client_for):
    client = client_for("operator")
    form = {"sides": "4,4", "concentration": 4, "policy": "row", "scenario": "single",
            "pattern": "all2all", "ranks": 16, "replicas": 1, "routing": "min",
            "vc_sets": "shared", "rate": 1.0, "message_packets": 1, "seed": 0,
            "max_cycles": 20000, "extra": '{"vcs": 6}'}
    response = client.post("/simulation/runs/new/", form)
    run = SimulationRun.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/simulation/runs/{run.pk}/"
    assert run.config["vcs"] == 6 and run.config["sides"] == [4, 4]
    bad = client.post("/simulation/runs/new/", {**form, "ranks": 999})
    assert bad.status_code == 400 and b"999 ranks exceed the 64 endpoints" in bad.content
    unknown = client.post("/simulation/runs/new/", {**form, "extra": '{"colour": 1}'})
    assert b"colour: unknown configuration key" in unknown.content
    assert SimulationRun.objects.count() == 1


def test_run_page_shows_progress_then_results_and_heat_map(client_for):
    run = services.start_run({**TINY, "scenario": "interference"})
    page = client_for("viewer").get(f"/simulation/runs/{run.pk}/").content.decode()
    assert 'data-sim-poll="1"' in page and "<progress" in page
    assert 'data-testid="results"' not in page
    services.execute_run(run.pk)
    page = client_for("viewer").get(f"/simulation/runs/{run.pk}/").content.decode()
    assert 'data-sim-poll="1"' not in page and 'data-testid="results"' in page
    assert page.count('class="switch-cell heat-') == 16 and "<svg" not in page
    assert "background" in page and "interference" in page


def test_sweep_list_query_count_does_not_grow(client_for, django_assert_max_num_queries):
    client = client_for("viewer")
    for i in range(3):
        services.create_sweep(name=f"s{i}", base=TINY, parameters={"seed": [i, i + 10]})
    with django_assert_max_num_queries(8):
        assert client.get("/simulation/sweeps/").status_code == 200
    for i in range(3):
        services.start_run({**TINY, "seed": 50 + i})
    with django_assert_max_num_queries(8):
        assert client.get("/simulation/").status_code == 200


def test_run_list_pages_keep_the_filters(client_for):
    run = services.start_run(TINY)
    SimulationRun.objects.filter(pk=run.pk).update(status=RunStatus.FAILED)
    SimulationRun.objects.bulk_create([
        SimulationRun(config=run.config, engine_version=run.engine_version,
                      config_hash=run.config_hash, status=RunStatus.FAILED)
        for _ in range(55)])
    client = client_for("viewer")
    first = client.get("/simulation/?status=failed").content.decode()
    assert 'href="?status=failed&amp;page=2">next</a>' in first and "page 1 of 2" in first
    second = client.get("/simulation/?status=failed&page=2").content.decode()
    assert 'href="?status=failed&amp;page=1">previous</a>' in second
    assert second.count("<tr data-run=") == 6


def test_sweep_pages_charts_and_downloads(client_for):
    sweep = services.create_sweep(
        name="mini study", base={**TINY, "ranks": 16},
        parameters={"policy": ["row", "diagonal"], "scenario": ["escalation", "interference"],
                    "replicas": [1, 2]})
    client = client_for("viewer")
    page = client.get(f"/simulation/sweeps/{sweep.pk}/").content.decode()
    assert 'data-sim-poll="1"' in page and "0 of 8 runs done" in page
    run_pending(sweep.runs.all())
    page = client.get(f"/simulation/sweeps/{sweep.pk}/?baseline=row").content.decode()
    assert "8 of 8 runs done" in page and 'data-sim-poll="1"' not in page
    response = client.get(f"/simulation/sweeps/{sweep.pk}/?baseline=row")
    assert 'data-testid="escalation-chart"' in page and 'data-testid="interference-chart"' in page
    escalation = response.context["escalation_chart"]
    assert sorted(s["name"] for s in escalation["series"]) == ["diagonal", "row"]
    assert all([x for x, _ in s["points"]] == [1, 2] for s in escalation["series"])
    assert escalation["y"]["title"] == "makespan (cycles)"
    bars = response.context["interference_chart"]
    assert bars["kind"] == "bar" and bars["categories"] == ["all2all"]
    assert len(bars["series"]) == 4 and all(len(s["values"]) == 1 for s in bars["series"])
    assert "normalised to row" in page and "1.000" in page
    listing = client.get("/simulation/sweeps/").content.decode()
    assert "mini study" in listing and "8/8" in listing
    response = client.get(f"/simulation/sweeps/{sweep.pk}/results.csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert response["Content-Type"].startswith("text/csv") and len(rows) == 8
    assert all(r["status"] == RunStatus.SUCCEEDED for r in rows)
    data = json.loads(client.get(f"/simulation/sweeps/{sweep.pk}/results.json").content)
    assert data["progress"]["done"] == 8 and len(data["results"]) == 8


def test_sweep_and_study_forms(client_for, django_capture_on_commit_callbacks):
    client = client_for("operator")
    assert b"2,380 runs" in client.get("/simulation/sweeps/new/").content
    response = client.post("/simulation/sweeps/new/", {
        "name": "seeds", "base": json.dumps(TINY), "policy": ["row", "diagonal"],
        "seed": "0, 1, 2"})
    sweep = Sweep.objects.get()
    assert response.status_code == 302 and sweep.run_count == 6
    bad = client.post("/simulation/sweeps/new/", {
        "name": "x", "base": json.dumps({**TINY, "scenario": "escalation"}),
        "replicas": "1,99"})
    assert bad.status_code == 400 and b"point replicas=99" in bad.content
    with django_capture_on_commit_callbacks(execute=False):
        study = client.post("/simulation/sweeps/study/", {"scale": 1})
    assert study.status_code == 302
    assert Sweep.objects.get(preset="study").run_count == 2380
