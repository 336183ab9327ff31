"""The simulation API: every endpoint for every role, shapes, validation, ownership."""

from __future__ import annotations

import re

import pytest

from hxportal.models import RunStatus
from simulation import services
from simulation.models import SimulationRun, Sweep
from tests.simulation.conftest import TINY, run_pending

pytestmark = pytest.mark.django_db

READ = {None: 401, "viewer": 200, "operator": 200, "admin": 200}
WRITE_ANY = {None: 401, "viewer": 403, "operator": 202, "admin": 202}


@pytest.fixture
def own(users):
    """A finished run and a sweep per role that owns one."""
    def make(role):
        user = users.get(role) if role else None
        run = services.start_run({**TINY, "seed": 100 + len(role or "")}, user=user)
        services.execute_run(run.pk)
        sweep = services.create_sweep(name=f"s-{role}", base=TINY,
                                      parameters={"seed": [1, 2]}, user=user)
        return run, sweep
    return make


@pytest.mark.parametrize("role", [None, "viewer", "operator", "admin"])
def test_run_endpoints_by_role(api, users, own, role):
    run, _sweep = own(role if role in ("operator", "admin") else "operator")
    client = api(role)
    assert client.get("/api/v1/simulation-runs/").status_code == READ[role]
    assert client.get(f"/api/v1/simulation-runs/{run.pk}/").status_code == READ[role]
    created = client.post("/api/v1/simulation-runs/", {"config": TINY}, format="json")
    assert created.status_code == WRITE_ANY[role], created.content
    validate = client.post("/api/v1/simulation-runs/validate/", {"config": TINY},
                           format="json")
    assert validate.status_code == {**WRITE_ANY, "operator": 200, "admin": 200}[role]
    if role in ("operator", "admin"):
        assert validate.json()["valid"] is True
    pending = services.start_run({**TINY, "seed": 7}, user=run.user)
    cancel = client.post(f"/api/v1/simulation-runs/{pending.pk}/cancel/")
    assert cancel.status_code == {**WRITE_ANY, "operator": 200, "admin": 200}[role]
    delete = client.delete(f"/api/v1/simulation-runs/{run.pk}/")
    assert delete.status_code == {**WRITE_ANY, "operator": 204, "admin": 204}[role]


@pytest.mark.parametrize("role", [None, "viewer", "operator", "admin"])
def test_sweep_endpoints_by_role(api, users, own, role):
    _run, sweep = own(role if role in ("operator", "admin") else "operator")
    client = api(role)
    assert client.get("/api/v1/sweeps/").status_code == READ[role]
    assert client.get(f"/api/v1/sweeps/{sweep.pk}/").status_code == READ[role]
    assert client.get(f"/api/v1/sweeps/{sweep.pk}/results/").status_code == READ[role]
    created = client.post("/api/v1/sweeps/", {"name": "n", "base": TINY,
                                              "parameters": {"seed": [3]}}, format="json")
    assert created.status_code == WRITE_ANY[role], created.content
    if role in (None, "viewer"):  # the study itself is exercised once below
        assert client.post("/api/v1/sweeps/study/", {"scale": 1},
                           format="json").status_code == WRITE_ANY[role]
    cancel = client.post(f"/api/v1/sweeps/{sweep.pk}/cancel/")
    assert cancel.status_code == {**WRITE_ANY, "operator": 200, "admin": 200}[role]
    delete = client.delete(f"/api/v1/sweeps/{sweep.pk}/")
    assert delete.status_code == {**WRITE_ANY, "operator": 204, "admin": 204}[role]


def test_operator_cannot_cancel_or_delete_another_operators_runs(api, users):
    theirs = services.start_run(TINY, user=users["operator2"])
    sweep = services.create_sweep(name="theirs", base=TINY, parameters={"seed": [1]},
                                  user=users["operator2"])
    client = api("operator")
    assert client.post(f"/api/v1/simulation-runs/{theirs.pk}/cancel/").status_code == 404
    assert client.delete(f"/api/v1/simulation-runs/{theirs.pk}/").status_code == 404
    assert client.post(f"/api/v1/sweeps/{sweep.pk}/cancel/").status_code == 404
    assert client.delete(f"/api/v1/sweeps/{sweep.pk}/").status_code == 404
    assert client.get(f"/api/v1/simulation-runs/{theirs.pk}/").status_code == 200
    theirs.refresh_from_db()
    assert theirs.status == RunStatus.PENDING
    assert api("admin").post(f"/api/v1/simulation-runs/{theirs.pk}/cancel/").status_code == 200
    assert client.delete(f"/api/v1/simulation-runs/{theirs.pk}/").status_code == 404
    assert api("admin").delete(f"/api/v1/simulation-runs/{theirs.pk}/").status_code == 204


def test_create_returns_202_with_the_run_and_enqueues_on_commit(
        api, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = api("operator").post("/api/v1/simulation-runs/",
                                        {"config": {**TINY, "seed": 3}}, format="json")
    assert response.status_code == 202, response.content
    body = response.json()
    assert len(callbacks) == 1
    assert body["status"] == "pending" and body["user"] == "operator"
    assert body["config"]["seed"] == 3 and body["config"]["vcs"] == 4
    assert len(body["config_hash"]) == 64 and body["engine_version"]
    assert body["page"] == f"/simulation/runs/{body['id']}/"
    run_pending(SimulationRun.objects.all())
    detail = api("viewer").get(f"/api/v1/simulation-runs/{body['id']}/").json()
    assert detail["status"] == "succeeded" and detail["progress"] == 1.0
    result = detail["result"]
    assert result["makespan_cycles"] > 0 and result["apps"][0]["policy"] == "diagonal"
    assert {"throughput", "latency_mean", "latency_p99", "cycles", "link_utilisation",
            "wall_seconds"} <= set(result)
    assert detail["summary"]["makespan_cycles"] == result["makespan_cycles"]
    listed = api("viewer").get("/api/v1/simulation-runs/?status=succeeded").json()
    assert listed["count"] == 1 and "result" not in listed["results"][0]
    again = api("operator").post("/api/v1/simulation-runs/", {"config": {**TINY, "seed": 3}},
                                 format="json").json()
    assert again["status"] == "succeeded" and again["result"]["reused_from"] == body["id"]


@pytest.mark.parametrize(("body", "field"), [
    ({"config": {**TINY, "colour": "red"}}, "colour"),
    ({"config": {**TINY, "ranks": 4096}}, "ranks"),
    ({"config": {**TINY, "max_cycles": 10**9}}, "max_cycles"),
    ({"config": [1]}, "config"),
    ({}, "config"),
    ({"config": TINY, "machine": "nope"}, "machine"),
])
def test_bad_run_input_is_400_naming_the_field(api, body, field):
    response = api("operator").post("/api/v1/simulation-runs/", body, format="json")
    assert response.status_code == 400, response.content
    data = response.json()
    assert field in data["errors"] and data["detail"], data
    check = api("operator").post("/api/v1/simulation-runs/validate/", body, format="json")
    assert check.status_code == 200, check.content
    assert check.json()["valid"] is False and check.json()["errors"] == data["errors"]
    assert not SimulationRun.objects.exists()


@pytest.mark.parametrize(("config", "fields"), [
    ({"input_buffer_packets": 1_000_000}, {"input_buffer_packets"}),
    ({"input_buffer_packets": 1_000_000, "output_buffer_packets": 1_000_000,
      "max_cycles": 20_000}, {"input_buffer_packets", "output_buffer_packets"}),
    ({"link_latency": 2_000_000}, {"packet_phits", "link_latency"}),
])
def test_memory_beyond_the_limit_is_400_naming_the_fields(api, config, fields):
    """Buffers of a million packets passed validation and a 20,000-cycle run of them
    took 1.8 GiB; now the estimate of memory refuses them before anything is stored."""
    body = {"config": {**TINY, **config}}
    response = api("operator").post("/api/v1/simulation-runs/", body, format="json")
    assert response.status_code == 400, response.content
    errors = response.json()["errors"]
    assert set(errors) == fields, errors
    assert all("GiB of memory" in m and "1.0 GiB per run" in m for f in fields
               for m in errors[f]), errors
    check = api("operator").post("/api/v1/simulation-runs/validate/", body, format="json")
    assert check.json()["valid"] is False and check.json()["errors"] == errors
    sweep = api("operator").post("/api/v1/sweeps/", {
        "name": "deep", "base": TINY, "parameters": {k: [v] for k, v in config.items()}},
        format="json")
    assert sweep.status_code == 400 and "parameters" in sweep.json()["errors"]
    assert not SimulationRun.objects.exists() and not Sweep.objects.exists()


def test_memory_limit_is_a_setting(api, settings):
    settings.HX_SIM_MAX_BYTES = 2**20
    response = api("operator").post("/api/v1/simulation-runs/", {"config": TINY},
                                    format="json")
    assert response.status_code == 400 and "1.0 MiB per run" in str(response.json())
    settings.HX_SIM_MAX_BYTES = 2**30
    ok = api("operator").post("/api/v1/simulation-runs/validate/", {"config": TINY},
                              format="json").json()
    assert ok["valid"] and 0 < ok["memory_floor_bytes"] <= ok["memory_bytes"] < 2**30
    assert ok["memory_limit_bytes"] == 2**30


def test_validate_accepts_a_machine_whose_full_buffers_alone_would_pass_the_limit(api):
    """65,536 endpoints with 16-packet input buffers, every buffer full, would take 1.3
    GiB; few runs come near, so the run is accepted and bounded as its packets in
    flight grow."""
    big = {"sides": [16, 16, 16], "concentration": 16, "ranks": 1024,
           "scenario": "interference", "max_cycles": 100_000, "input_buffer_packets": 16}
    ok = api("operator").post("/api/v1/simulation-runs/validate/", {"config": big},
                              format="json").json()
    assert ok["valid"], ok
    assert ok["memory_floor_bytes"] < ok["memory_limit_bytes"] < ok["memory_bytes"]


def test_validate_reports_derived_sizes(api, machine):
    body = api("operator").post("/api/v1/simulation-runs/validate/",
                                {"config": {**TINY, "vc_sets": "per_partition",
                                            "scenario": "escalation", "replicas": 2}},
                                format="json").json()
    assert body["valid"] and body["endpoints"] == 64 and body["total_vcs"] == 8
    assert "2 replicas" in body["description"]
    on_machine = api("operator").post("/api/v1/simulation-runs/validate/",
                                      {"config": {"ranks": 16, "sides": [8, 8]},
                                       "machine": "m4"}, format="json").json()
    assert on_machine["config"]["sides"] == [4, 4]


def test_filters_and_unknown_query_parameters(api, users):
    sweep = services.create_sweep(name="f", base=TINY, parameters={"seed": [1, 2]})
    services.start_run({**TINY, "policy": "row"}, user=users["operator"])
    client = api("viewer")
    assert client.get(f"/api/v1/simulation-runs/?sweep={sweep.pk}").json()["count"] == 2
    assert client.get("/api/v1/simulation-runs/?standalone=true").json()["count"] == 1
    assert client.get("/api/v1/simulation-runs/?policy=row").json()["count"] == 1
    assert client.get("/api/v1/simulation-runs/?user=operator").json()["count"] == 1
    assert client.get("/api/v1/simulation-runs/?status=bogus").status_code == 400
    bad = client.get("/api/v1/simulation-runs/?colour=red")
    assert bad.status_code == 400 and "colour" in bad.json()["errors"]
    assert client.get("/api/v1/sweeps/?name=F").json()["count"] == 1
    assert client.get(f"/api/v1/sweeps/?id={sweep.pk}").json()["count"] == 1
    assert client.get("/api/v1/sweeps/?x=1").status_code == 400
    assert client.get("/api/v1/simulation-runs/?limit=100000").json()["count"] == 3


def test_sweep_api_progress_and_partial_results(api, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = api("operator").post("/api/v1/sweeps/", {
            "name": "policies", "base": TINY,
            "parameters": {"policy": ["row", "diagonal"], "routing": ["min", "omniwar"]}},
            format="json")
    assert response.status_code == 202, response.content
    body = response.json()
    assert len(callbacks) == 4 and body["run_count"] == 4 and body["status"] == "pending"
    assert body["progress"] == {"total": 4, "done": 0, "succeeded": 0, "failed": 0,
                                "cancelled": 0, "running": 0, "pending": 4, "fraction": 0.0,
                                "status": "pending"}
    sweep = Sweep.objects.get(pk=body["id"])
    services.execute_run(sweep.runs.order_by("id").first().pk)
    detail = api("viewer").get(f"/api/v1/sweeps/{sweep.pk}/").json()
    assert detail["status"] == "running" and detail["progress"]["done"] == 1
    assert len(detail["results"]) == 4
    done = [r for r in detail["results"] if r["status"] == "succeeded"]
    assert len(done) == 1 and done[0]["makespan_cycles"] > 0
    run_pending(sweep.runs.all())
    listed = api("viewer").get("/api/v1/sweeps/").json()["results"][0]
    assert listed["status"] == "succeeded" and listed["progress"]["done"] == 4
    assert "results" not in listed
    rows = api("viewer").get(f"/api/v1/sweeps/{sweep.pk}/results/").json()
    assert {(r["policy"], r["routing"]) for r in rows} == {
        ("row", "min"), ("row", "omniwar"), ("diagonal", "min"), ("diagonal", "omniwar")}


@pytest.mark.parametrize(("body", "field"), [
    ({"name": "x", "parameters": {"seed": list(range(2001))}}, "parameters.seed"),
    ({"name": "x", "parameters": {"seed": list(range(50)), "policy": [
        "row", "diagonal", "full_spread", "rectangular", "l_shape", "random_switch",
        "random_endpoint"],
        "routing": ["min", "omniwar", "dor"], "vc_sets": ["shared", "per_partition"]}},
     "parameters"),
    ({"name": "x", "parameters": {"colour": [1]}}, "parameters.colour"),
    ({"name": "x", "base": {"ranks": 999}, "parameters": {"seed": [1]}}, "parameters"),
    ({"name": "", "parameters": {"seed": [1]}}, "name"),
    ({"name": "x"}, "parameters"),
])
def test_bad_sweeps_are_400(api, body, field):
    response = api("operator").post("/api/v1/sweeps/", {"base": TINY, **body}
                                    if "base" not in body else body, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()["errors"], response.json()
    assert not Sweep.objects.exists()


def test_study_endpoint_launches_the_reference_study(api, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = api("operator").post("/api/v1/sweeps/study/", {"scale": 1}, format="json")
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["preset"] == "study" and body["run_count"] == 2380 == len(callbacks)
    assert body["progress"]["total"] == 2380
    assert api("operator").post("/api/v1/sweeps/study/", {"scale": 0},
                                format="json").status_code == 400
    with django_capture_on_commit_callbacks(execute=False):
        admin = api("admin").post("/api/v1/sweeps/study/", {"scale": 2, "name": "big"},
                                  format="json")
    assert admin.status_code == 202 and admin.json()["name"] == "big"


def names_a_run(log: list[str], ids: set[int]) -> bool:
    return any(re.search(rf"\brun {pk}\b", line) for line in log for pk in ids)


def test_private_data_reuses_anothers_result_without_naming_their_run(api, settings):
    """Re-submitting another user's configuration reuses the computation, but under
    HX_PRIVATE_DATA nothing names their run: not the result, the summary or the log."""
    settings.HX_PRIVATE_DATA = True
    theirs = api("operator").post("/api/v1/simulation-runs/", {"config": TINY},
                                  format="json").json()
    api("operator").post("/api/v1/simulation-runs/", {"config": {**TINY, "seed": 5}},
                         format="json")
    run_pending(SimulationRun.objects.all())
    hidden = set(SimulationRun.objects.values_list("id", flat=True))
    response = api("operator2").post("/api/v1/simulation-runs/", {"config": TINY},
                                     format="json")
    mine = response.json()
    assert mine["status"] == "succeeded", "the computation is still reused"
    detail = api("operator2").get(f"/api/v1/simulation-runs/{mine['id']}/").json()
    assert detail["result"]["reused_from"] is None
    assert detail["summary"]["reused_from"] is None and detail["wall_seconds"] == 0.0
    assert not names_a_run(detail["log"], hidden), detail["log"]
    # A sweep's run that reuses another's result at execution does not name it either.
    sweep = api("operator2").post("/api/v1/sweeps/", {
        "name": "again", "base": TINY, "parameters": {"seed": [5, 9]}}, format="json").json()
    run_pending(SimulationRun.objects.filter(sweep_id=sweep["id"]))
    rows = api("operator2").get(f"/api/v1/sweeps/{sweep['id']}/").json()["results"]
    assert [(row["seed"], row["reused_from"], row["wall_seconds"] == 0) for row in rows] == [
        (5, None, True), (9, None, False)]
    logs = SimulationRun.objects.filter(sweep_id=sweep["id"]).values_list("log", flat=True)
    assert not any(names_a_run(log, hidden) for log in logs)
    # Their own earlier run is named; admins, who read every run, see the source.
    again = api("operator2").post("/api/v1/simulation-runs/", {"config": TINY},
                                  format="json").json()
    assert again["result"]["reused_from"] == mine["id"]
    admin = api("admin").post("/api/v1/simulation-runs/", {"config": TINY},
                              format="json").json()
    assert admin["result"]["reused_from"] == theirs["id"]
