"""Calibrations over the API and on the pages: roles, bad input, progress, curves,
and the recommendation page saying which method answered and how old it is."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from allocation.services import jobs, machines
from recommendations import constants as recommendation_constants
from recommendations import services as recommendations
from recommendations.models import Calibration
from simulation.engine import SimConfig
from simulation.engine import memory as engine_memory
from simulation.engine import simulator as engine_simulator
from simulation.models import SimulationRun
from tests.simulation.conftest import run_pending

pytestmark = pytest.mark.django_db

SMALL_GRID = {"patterns": ["all2all"], "sizes": [8, 16], "loads": [0.5], "seeds": [0],
              "policies": ["row", "diagonal", "random_switch"]}


@pytest.fixture
def half(users):
    machine = machines.create_machine(name="half", sides=[4, 4], concentration=4)
    jobs.submit_job(owner=users["admin"], machine=machine, name="bg", node_count=32,
                    pattern="all2all", policy="row")
    return machine


@pytest.mark.parametrize("role, code", [(None, 401), ("viewer", 403), ("operator", 201),
                                        ("admin", 201)])
def test_starting_needs_an_operator(api, half, role, code):
    response = api(role).post("/api/v1/calibrations/", {"machine": "half", **SMALL_GRID},
                              format="json")
    assert response.status_code == code, response.content
    if code == 201:
        body = response.json()
        assert body["status"] == "running" and body["run_count"] == 6
        assert body["progress"]["total"] == 6 and body["progress"]["done"] == 0
        assert body["shape"] == "4x4, c = 4" and body["grid"]["sizes"] == [8, 16]
        again = api("operator").post("/api/v1/calibrations/", {"machine": "half"},
                                     format="json")
        assert again.status_code == 200 and again.json()["id"] == body["id"]


@pytest.mark.parametrize("body, field", [
    ({"machine": "nope"}, "machine"), ({"machine": "half", "sizes": [1]}, "sizes"),
    ({"machine": "half", "sizes": [100]}, "sizes"), ({"machine": "half", "loads": [1.5]}, "loads"),
    ({"machine": "half", "patterns": ["teleport"]}, "patterns"),
    ({"machine": "half", "policies": ["best"]}, "policies"),
    ({"machine": "half", "seeds": list(range(65))}, "seeds"),
    ({"machine": "half", "sizes": "8"}, "sizes"),
])
def test_bad_input_is_a_400_naming_the_field(api, half, body, field):
    response = api("operator").post("/api/v1/calibrations/", body, format="json")
    assert response.status_code == 400 and field in response.json()["errors"], response.content
    assert not Calibration.objects.exists()


def test_reading_progress_curves_and_cancel(api, client_for, half):
    start = api("operator").post("/api/v1/calibrations/", {"machine": "half", **SMALL_GRID},
                                 format="json").json()
    calibration = recommendations.prepare_calibration(start["id"])
    first = SimulationRun.objects.filter(sweep_id=calibration.sweep_id,
                                         parameters__point__node_count=8)
    run_pending(first)
    body = api("viewer").get(f"/api/v1/calibrations/{calibration.pk}/").json()
    assert body["progress"]["done"] == 3 and body["points_done"] == 3
    assert body["patterns"] == ["all2all"]
    page = client_for("viewer").get(f"/recommendations/calibrations/{calibration.pk}/")
    html = page.content.decode()
    assert page.status_code == 200 and 'data-poll-while="running"' in html
    assert 'data-testid="chart-calibration-all2all"' in html or "calibration-all2all" in html
    assert "; 3 policies; seeds 0." in html
    assert "cancel-calibration" not in html  # viewers do not cancel
    listing = client_for("viewer").get("/recommendations/calibrations/").content.decode()
    assert f'data-calibration="{calibration.pk}"' in listing and "calibration-form" not in listing
    assert api("viewer").post(f"/api/v1/calibrations/{calibration.pk}/cancel/").status_code \
        == 403
    cancelled = api("operator").post(f"/api/v1/calibrations/{calibration.pk}/cancel/").json()
    assert cancelled["status"] == "ready" and cancelled["points_done"] == 3
    assert "data-poll" not in client_for("viewer").get(
        f"/recommendations/calibrations/{calibration.pk}/").content.decode()


def test_the_grid_counts_a_single_policy_in_the_singular(api, client_for, half):
    start = api("operator").post("/api/v1/calibrations/", {
        "machine": "half", **SMALL_GRID, "policies": ["row"]}, format="json").json()
    html = client_for("viewer").get(
        f"/recommendations/calibrations/{start['id']}/").content.decode()
    assert "; 1 policy; seeds 0." in html


def test_the_start_page_is_for_operators(client_for, half):
    assert client_for("viewer").get("/recommendations/calibrations/start/").status_code == 403
    response = client_for("operator").post("/recommendations/calibrations/start/",
                                           {"machine": "half", "patterns": ["all2all"]})
    calibration = Calibration.objects.get()
    assert response.status_code == 302 and response["Location"] == \
        f"/recommendations/calibrations/{calibration.pk}/"
    assert calibration.grid["patterns"] == ["all2all"]
    bad = client_for("operator").post("/recommendations/calibrations/start/",
                                      {"machine": "nope"})
    assert bad.status_code == 400


def calibrated_answer(api, machine, monkeypatch, axes: dict, node_count: int):
    """Calibrate ``machine`` on ``axes`` inline, then ask the API for an all-to-all of
    ``node_count`` nodes with no live simulation allowed: (calibration, response body)."""
    calibration, _ = recommendations.start_calibration(machine, axes=axes)
    calibration = recommendations.prepare_calibration(calibration.pk)
    run_pending(SimulationRun.objects.filter(sweep_id=calibration.sweep_id))
    monkeypatch.setattr(recommendation_constants, "LIVE_DEADLINE_SHARE", 0.0)
    return calibration, api("operator").post("/api/v1/recommendations/", {
        "machine": machine.name, "node_count": node_count, "pattern": "all2all",
        "t_cmpt": 100, "t_comm": 50}, format="json").json()


def test_a_calibrated_recommendation_says_so_with_its_age(api, client_for, half, monkeypatch):
    calibration, body = calibrated_answer(api, half, monkeypatch, SMALL_GRID, 12)
    assert body["status"] == "ready" and body["method"] == "calibrated"
    assert body["calibration"]["id"] == calibration.pk
    assert body["calibration"]["age_seconds"] is not None
    assert body["calibration"]["engine_version"] == calibration.engine_version
    html = client_for("viewer").get(f"/recommendations/{body['id']}/").content.decode()
    assert 'data-method="calibrated"' in html and f"calibration {calibration.pk}" in html


def test_a_calibrated_ranking_shows_how_far_the_seeds_lay_apart(api, client_for, half,
                                                                 monkeypatch):
    """Two seeds per point: each calibrated entry carries its seed spread (the API's
    ``seed_spread``, the page's "seeds N % apart"), the recommendation's inputs the
    spread per policy it was read from."""
    _, body = calibrated_answer(api, half, monkeypatch, {**SMALL_GRID, "seeds": [0, 1]}, 16)
    assert body["method"] == "calibrated"
    spread = body["inputs"]["calibrated_spread"]
    assert set(spread) == set(SMALL_GRID["policies"])
    entries = [e for e in body["ranking"] if e.get("source") == "calibrated"]
    assert {e["policy"]: e["seed_spread"] for e in entries} == spread  # the others analytic
    assert not any("seed_spread" in e for e in body["ranking"] if e.get("source") == "analytic")
    html = client_for("viewer").get(f"/recommendations/{body['id']}/").content.decode()
    assert html.count(" apart</small>") == len(entries) == 3


def test_an_analytic_answer_while_calibrating_says_why(client_for, api, half, monkeypatch,
                                                       settings):
    settings.HX_CALIBRATE_AUTOMATICALLY = True
    monkeypatch.setattr(recommendation_constants, "LIVE_DEADLINE_SHARE", 0.0)
    body = api("operator").post("/api/v1/recommendations/", {
        "machine": "half", "node_count": 12, "pattern": "stencil4", "t_cmpt": 100,
        "t_comm": 50}, format="json").json()
    assert body["method"] == "analytic" and body["calibration"] is None
    html = client_for("viewer").get(f"/recommendations/{body['id']}/").content.decode()
    assert 'data-testid="calibrating"' in html


def test_the_command_calibrates_inline(half, capsys):
    call_command("hx_calibrate", "half", "--patterns", "all2all", "--sizes", "8",
                 "--loads", "0.5", "--seeds", "0", "--policies", "row", "diagonal", "--inline")
    out = capsys.readouterr().out
    calibration = Calibration.objects.get()
    assert calibration.status == "ready" and calibration.points_done == 2
    assert f"calibration {calibration.pk}: ready, 2 runs answer" in out


def test_the_calibration_chart_shades_each_policys_seed_range():
    """Two seeds: a band under each policy's line from its smaller to its larger seed,
    relative to the baseline's mean, kept out of the legend; one seed: no band."""
    from recommendations.calibration.table import PointResult, build_table
    from recommendations.charts import calibration_charts

    runs = [PointResult("all2all", n, 0.5, p, c, 1.0) for n, p, c in [
        (8, "diagonal", 1000), (8, "diagonal", 1000), (8, "row", 1100), (8, "row", 1500),
        (16, "diagonal", 2000), (16, "diagonal", 2000), (16, "row", 2400)]]
    chart, = calibration_charts(Calibration(table=build_table(runs).as_dict()), 0.5)
    bands = [s for s in chart["series"] if s["style"] == "band"]
    assert [b["name"] for b in bands] == ["diagonal: seeds' range", "row: seeds' range"]
    assert all(b["legend"] is False for b in bands)
    row = next(b for b in bands if b["name"].startswith("row"))
    assert row["points"] == [[8, pytest.approx(1.1), pytest.approx(1.5)], [16, None, None]]
    assert "shaded: the range of its seeds" in chart["title"]


def test_runs_stopped_at_the_memory_limit_are_counted_and_linked(api, client_for, half,
                                                                 settings, monkeypatch):
    """A run whose packets in flight would grow its pool past HX_SIM_MAX_BYTES stops,
    failed and saying so; the calibration counts such runs and links its failed ones.
    The pool starts tiny here (two records over the ranks) so that it must grow."""
    def tiny(ranks, endpoints):
        return ranks + 2

    monkeypatch.setattr(engine_memory, "initial_pool_packets", tiny)
    monkeypatch.setattr(engine_simulator, "initial_pool_packets", tiny)
    start = api("operator").post("/api/v1/calibrations/",
                                 {"machine": "half", **SMALL_GRID, "sizes": [8]},
                                 format="json").json()
    calibration = recommendations.prepare_calibration(start["id"])
    runs = SimulationRun.objects.filter(sweep_id=calibration.sweep_id)
    est = engine_memory.estimate_memory(SimConfig.from_dict(runs.first().config))
    settings.HX_SIM_MAX_BYTES = est.floor + 40 * engine_memory.PACKET  # 40 records more
    assert run_pending(runs) == 3
    failed = runs.filter(status="failed")
    assert failed.count() == 3
    for run in failed:
        assert run.error.startswith("MemoryLimitReached: the run stopped at cycle "), run.error
        assert "packets in flight fill its packet pool of " in run.error
        assert run.error.endswith(" past the limit of 2.3 MiB per run")
    body = api("viewer").get(f"/api/v1/calibrations/{calibration.pk}/").json()
    assert body["progress"]["failed"] == 3 and body["progress"]["memory_stopped"] == 3
    html = client_for("viewer").get(
        f"/recommendations/calibrations/{calibration.pk}/").content.decode()
    assert 'data-testid="calibration-failed"' in html
    assert "3 runs failed and are left out of the table; 3 of them stopped" in html
    assert f"?sweep={calibration.sweep_id}&amp;status=failed&amp;origin=calibration" in html
