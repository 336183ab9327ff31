"""Spare recommendation, select-the-fastest, estimation runs and node health (API + service)."""

from __future__ import annotations

import pytest
from django_celery_beat.models import PeriodicTask

from allocation.models import Allocation, AllocationRole, Job
from health import maths, tasks
from health import services as health
from health.models import BenchmarkResult, Estimate, EstimationRun
from hxportal.models import RunStatus

pytestmark = pytest.mark.django_db

WORKED = {"n_node": 100, "p_abn": 0.026, "alpha_abn": 3.53, "t_bench": 0.0167}


@pytest.fixture(autouse=True)
def held_spares(settings):
    """The study's worked cases are of its model, where spares are held to the end."""
    settings.HX_SPARES_RELEASED = False


def test_released_spares_cost_their_benchmark_only(api, settings):
    """With release on (hx-prolog-bench shrinks the job), E[C] counts the dropped
    spares at the benchmark's time: more spares pay, and the same time costs less."""
    held = api("viewer").post("/api/v1/spares/", {**WORKED, "t_cmpt": 100, "t_comm": 0},
                              format="json").json()
    released = api("viewer").post("/api/v1/spares/", {**WORKED, "t_cmpt": 100, "t_comm": 0,
                                                      "release": True}, format="json").json()
    assert (held["release"], released["release"]) == (False, True)
    assert released["n_spare"] > held["n_spare"] == 8
    assert released["expected_cost"] < held["expected_cost"]
    by_spares = {p["n_spare"]: p for p in released["curve"]}
    point = by_spares[held["n_spare"]]
    # Same E[T_total]; the cost differs by the spares' application time only.
    same = next(p for p in held["curve"] if p["n_spare"] == held["n_spare"])
    assert point["expected_time"] == pytest.approx(same["expected_time"])
    app_time = same["expected_time"] - WORKED["t_bench"] * (
        1 + (WORKED["alpha_abn"] - 1) * (1 - (1 - WORKED["p_abn"]) ** (100 + 8)))
    assert same["expected_cost"] - point["expected_cost"] == pytest.approx(8 * app_time)
    settings.HX_SPARES_RELEASED = True
    default = api("viewer").post("/api/v1/spares/", {**WORKED, "t_cmpt": 100, "t_comm": 0},
                                 format="json").json()
    assert default["release"] is True and default["n_spare"] == released["n_spare"]


def seed_history(machine, owner, *, n_jobs: int = 60, seed: int = 3, bad_nodes: int = 2,
                 benchmark: str = "stream") -> list[Job]:
    """A synthetic history on the 64-node machine: 16 nodes per job, two repeatedly bad."""
    runs = maths.synthetic_history(n_jobs, 16, p_abn=0.02, alpha_abn=3.5, t_bench=0.0167,
                                    noise=0.01, n_nodes_pool=64, seed=seed,
                                    benchmark=benchmark, bad_nodes=bad_nodes, bad_p_abn=0.7)
    by_job: dict[str, dict[str, float]] = {}
    for run in runs:
        by_job.setdefault(run.job, {})[f"n{int(run.node[1:]) + 1:02d}"] = run.seconds
    jobs = []
    for name, times in by_job.items():
        job = Job.objects.create(name=name, external_id=f"s{name}", owner=owner,
                                 machine=machine, node_count=14)
        health.ingest_payload({"job": job.pk, "benchmark": benchmark, "results": [
            {"node": n, "seconds": s} for n, s in times.items()]})
        jobs.append(job)
    return jobs


@pytest.mark.parametrize(("t_cmpt", "t_comm", "n_spare"), [(100, 0, 8), (50, 50, 7),
                                                           (10, 90, 5)])
def test_spares_worked_cases(api, t_cmpt, t_comm, n_spare):
    response = api("viewer").post("/api/v1/spares/", {**WORKED, "t_cmpt": t_cmpt,
                                                      "t_comm": t_comm}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["n_spare"] == n_spare
    assert body["saving_ratio"] == pytest.approx(body["as_is_cost"] / body["expected_cost"])
    assert len(body["curve"]) == 101 and body["curve_downsampled"] is False
    assert body["parameters_source"] == "explicit" and body["estimate"] is None
    best = min(body["curve"], key=lambda p: p["expected_cost"])
    assert best["n_spare"] == n_spare


def test_spares_second_worked_case_and_wall_time(api):
    body = api("viewer").post("/api/v1/spares/", {
        "n_node": 100, "p_abn": 0.005, "alpha_abn": 10, "t_bench": 0.1, "t_cmpt": 10,
        "t_comm": 5}, format="json").json()
    assert body["n_spare"] == 3
    assert body["expected_cost"] == pytest.approx(1610.0, abs=0.05)
    assert body["as_is_cost"] == pytest.approx(5048.07, abs=0.01)
    wall = api("viewer").post("/api/v1/spares/", {**WORKED, "wall_time": 200},
                              format="json").json()
    assert (wall["t_cmpt"], wall["t_comm"]) == (100.0, 0.0) and wall["n_spare"] == 8
    frac = api("viewer").post("/api/v1/spares/", {**WORKED, "wall_time": 200,
                                                  "compute_fraction": 0.25},
                              format="json").json()
    assert frac["t_cmpt"] == 50.0


def test_spares_curve_is_downsampled_for_big_jobs(api):
    body = api("viewer").post("/api/v1/spares/", {**WORKED, "n_node": 50_000, "t_cmpt": 100},
                              format="json").json()
    assert body["curve_downsampled"] is True and body["curve_points"] <= 2000
    assert len(body["curve"]) == body["curve_points"]
    assert body["n_spare"] in [p["n_spare"] for p in body["curve"]]
    assert "downsampled" in body["curve_note"]


@pytest.mark.parametrize(("body", "field"), [
    ({"t_cmpt": 100}, "machine"),  # needs an estimate
    ({"t_cmpt": 100, "p_abn": 0.1, "alpha_abn": 2}, "t_bench"),
    ({**WORKED}, "t_cmpt"),
    ({**WORKED, "t_cmpt": 1, "wall_time": 5}, "wall_time"),
    ({**WORKED, "t_cmpt": 1, "compute_fraction": 0.5}, "compute_fraction"),
    ({**WORKED, "wall_time": 5, "compute_fraction": 1.5}, "compute_fraction"),
    ({**WORKED, "t_cmpt": -1}, "t_cmpt"),
    ({**WORKED, "t_cmpt": 0, "t_comm": 0}, "t_cmpt"),
    ({**WORKED, "t_cmpt": 1, "p_abn": 1.5}, "p_abn"),
    ({**WORKED, "t_cmpt": 1, "alpha_abn": 0.5}, "alpha_abn"),
    ({**WORKED, "t_cmpt": 1, "t_bench": 0}, "t_bench"),
    ({**WORKED, "t_cmpt": 1, "n_node": 0}, "n_node"),
    ({**WORKED, "t_cmpt": 1, "n_node": 10**9}, "n_node"),
    ({**WORKED, "t_cmpt": 1, "machine": "nope"}, "machine"),
    ({**WORKED, "t_cmpt": 1, "max_curve_points": 2}, "max_curve_points"),
])
def test_bad_spares_input_is_400(api, machine, body, field):
    if "machine" not in body and field == "machine":
        body = {**body, "machine": "m4"}
    body = {"n_node": 100, **body}
    response = api("viewer").post("/api/v1/spares/", body, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()["errors"], response.json()


def test_estimation_run_stores_estimates_and_feeds_spares(api, machine, users,
                                                          django_capture_on_commit_callbacks):
    seed_history(machine, users["operator"])
    with django_capture_on_commit_callbacks() as callbacks:
        response = api("operator").post("/api/v1/estimation-runs/",
                                        {"machine": "m4", "window_days": 30}, format="json")
    assert response.status_code == 202, response.content
    run_id = response.json()["id"]
    assert response.json()["status"] == "pending" and len(callbacks) == 1
    tasks.run_estimation.apply(args=[run_id])
    run = EstimationRun.objects.get(pk=run_id)
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.progress == 1.0 and any("stream:" in line for line in run.log)
    estimate = Estimate.objects.get(run=run)
    assert estimate.benchmark == "stream" and estimate.runs == 960
    assert estimate.t_bench == pytest.approx(0.0167, rel=0.01)
    assert estimate.alpha_abn == pytest.approx(3.5, rel=0.05)
    assert estimate.p_abn_low < estimate.p_abn < estimate.p_abn_high
    assert estimate.rule["name"] == maths.RULE_NAME
    # A redelivered message changes nothing.
    tasks.run_estimation.apply(args=[run_id])
    assert Estimate.objects.filter(run=run).count() == 1
    listed = api("viewer").get("/api/v1/estimates/?machine=m4&benchmark=stream").json()
    assert listed["count"] == 1 and listed["results"][0]["p_abn"] == estimate.p_abn
    detail = api("viewer").get(f"/api/v1/estimation-runs/{run_id}/").json()
    assert detail["status"] == "succeeded" and detail["log"]
    body = api("viewer").post("/api/v1/spares/", {"n_node": 100, "t_cmpt": 100,
                                                  "machine": "m4"}, format="json").json()
    assert body["parameters_source"] == "estimate"
    assert body["estimate"]["id"] == estimate.pk and body["p_abn"] == estimate.p_abn
    mixed = api("viewer").post("/api/v1/spares/", {"n_node": 100, "t_cmpt": 100,
                                                   "machine": "m4", "p_abn": 0.001},
                               format="json").json()
    assert mixed["parameters_source"] == "estimate+explicit" and mixed["p_abn"] == 0.001
    assert api("viewer").post("/api/v1/spares/", {"n_node": 10, "t_cmpt": 1, "machine": "m4",
                                                  "benchmark": "dgemm"},
                              format="json").status_code == 400


def test_empty_window_and_bad_run_input(api, machine):
    run = health.start_estimation(machine, window_days=7)
    tasks.run_estimation.apply(args=[run.pk])
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED and run.result["estimates"] == []
    assert "nothing estimated" in run.log[-1]
    client = api("operator")
    for body, field in [({"machine": "nope"}, "machine"),
                        ({"machine": "m4", "window_days": 0}, "window_days"),
                        ({"machine": "m4", "window_days": 99999}, "window_days"),
                        ({"machine": "m4", "benchmark": "a b"}, "benchmark")]:
        response = client.post("/api/v1/estimation-runs/", body, format="json")
        assert response.status_code == 400 and field in response.json()["errors"]


def test_beat_schedule_and_estimate_all(api, machine, users,
                                        django_capture_on_commit_callbacks):
    entry = PeriodicTask.objects.get(name="estimate all machines")
    assert entry.task == "allocation.tasks.estimate_all_machines" and entry.enabled
    assert entry.crontab is not None
    assert tasks.estimate_all_machines.apply().get() == []  # no results: no runs
    seed_history(machine, users["operator"], n_jobs=5)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        ids = tasks.estimate_all_machines.apply().get()
    assert len(ids) == 1 and len(callbacks) == 1
    assert EstimationRun.objects.get(pk=ids[0]).machine == machine
    listed = api("viewer").get("/api/v1/estimation-runs/?machine=m4").json()
    assert listed["count"] == 1 and listed["results"][0]["user"] is None


def test_node_health_finds_the_bad_nodes(api, machine, users):
    seed_history(machine, users["operator"])
    body = api("viewer").get("/api/v1/node-health/?machine=m4").json()
    assert body["benchmark"] == "stream" and body["runs"] == 960
    assert body["drain_candidates"] == "n[01-02]"
    top = body["nodes"][0]
    assert top["node"] in ("n01", "n02") and top["drain_candidate"] and top["evidence"]
    assert api("viewer").get("/api/v1/node-health/?machine=nope").status_code == 400
    assert api("viewer").get("/api/v1/node-health/?machine=m4&x=1").status_code == 400
    assert api("viewer").get(
        "/api/v1/node-health/?machine=m4&benchmark=dgemm").status_code == 400
    node, reason = health.drain_suspect(machine, "n01")
    node.refresh_from_db()
    assert node.state == "drained" and reason.startswith("suspicion: ")
    assert "runs abnormal" in node.state_reason


def test_select_fastest_from_times_and_from_job(api, machine, users):
    times = {"n01": 1.0, "n02": 1.02, "n03": 0.99, "n04": 3.1, "n05": 1.01, "n06": 1.0}
    body = api("viewer").post("/api/v1/select-fastest/", {"times": times, "n_node": 4},
                              format="json").json()
    assert body["keep"] == "n[01,03,05-06]" and body["dropped"] == "n[02,04]"
    assert body["abnormal"] == "n04" and body["abnormal_kept"] == "" and body["n_spare"] == 2
    job = Job.objects.create(name="j", external_id="99", owner=users["operator"],
                             machine=machine, node_count=4)
    nodes = {n.hostname: n for n in machine.nodes.filter(hostname__in=times)}
    for rank, host in enumerate(sorted(times)):
        Allocation.objects.create(job=job, node=nodes[host], rank=rank,
                                  role=AllocationRole.SPARE if rank >= 4 else
                                  AllocationRole.PRIMARY)
    health.ingest_payload({"job": job.pk, "benchmark": "stream", "results": [
        {"node": n, "seconds": s} for n, s in times.items()]})
    by_job = api("operator").post("/api/v1/select-fastest/", {"job": "99",
                                                              "record_roles": True},
                                  format="json")
    assert by_job.status_code == 200, by_job.content
    assert by_job.json()["keep"] == body["keep"] and by_job.json()["n_node"] == 4
    assert by_job.json()["roles"] == {"primary": 4, "excluded": 2}
    roles = dict(Allocation.objects.filter(job=job).values_list("node__hostname", "role"))
    assert roles["n04"] == "excluded" and roles["n02"] == "excluded" and roles["n05"] == "primary"
    assert api("viewer").post("/api/v1/select-fastest/", {"job": "99", "record_roles": True},
                              format="json").status_code == 403


@pytest.mark.parametrize(("body", "field"), [
    ({"times": {"n01": 1.0}, "n_node": 2}, "n_node"),
    ({"times": {"n01": 1.0, "n02": -1}, "n_node": 1}, "times.n02"),
    ({"times": {"n01": 1.0, "n02": "x"}, "n_node": 1}, "times.n02"),
    ({"times": {"n{1}": 1.0}, "n_node": 1}, "times.n{1}"),
    ({"times": {"n01": 1.0}}, "n_node"),
    ({"times": {}, "n_node": 1}, "times"),
    ({"n_node": 1}, "times"),
    ({"job": "nope"}, "job"),
    ({"times": {"n01": 1.0, "n02": 1.0}, "n_node": 1, "abnormal_threshold": 0.5},
     "abnormal_threshold"),
    ({"times": {"n01": 1.0}, "n_node": 1, "record_roles": True}, "record_roles"),
])
def test_bad_select_fastest_input_is_400(api, machine, body, field):
    response = api("operator").post("/api/v1/select-fastest/", body, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()["errors"], response.json()


def test_select_fastest_job_benchmark_errors(api, machine, users):
    job = Job.objects.create(name="j", owner=users["operator"], machine=machine, node_count=1)
    client = api("viewer")
    assert "no stored" in client.post("/api/v1/select-fastest/", {"job": str(job.pk)},
                                      format="json").json()["errors"]["job"][0]
    for name in ("a", "b"):
        health.ingest_payload({"job": job.pk, "benchmark": name,
                               "results": [{"node": "n01", "seconds": 1.0}]})
    response = client.post("/api/v1/select-fastest/", {"job": str(job.pk)}, format="json")
    assert "several" in response.json()["errors"]["benchmark"][0]
    response = client.post("/api/v1/select-fastest/", {"job": str(job.pk), "benchmark": "c"},
                           format="json")
    assert response.status_code == 400
    ok = client.post("/api/v1/select-fastest/", {"job": str(job.pk), "benchmark": "b"},
                     format="json")
    assert ok.status_code == 200 and ok.json()["keep"] == "n01"
    assert BenchmarkResult.objects.count() == 2


def test_per_node_spares_avoid_suspects(api, machine, users):
    seed_history(machine, users["operator"])
    run = health.start_estimation(machine)
    tasks.run_estimation.apply(args=[run.pk])
    body = api("viewer").post("/api/v1/spares/", {"n_node": 40, "t_cmpt": 100, "machine": "m4",
                                                  "per_node": True}, format="json")
    assert body.status_code == 200, body.content
    result = body.json()
    assert result["per_node"] is True and result["parameters_source"] == "estimate"
    from hxportal import hostlists

    chosen = hostlists.expand(result["chosen"])
    assert len(chosen) == result["n_total"] == 40 + result["n_spare"]
    assert "n01" not in chosen and "n02" not in chosen
    assert result["curve"][-1]["n_spare"] == 24  # 64 free nodes - 40
    too_many = api("viewer").post("/api/v1/spares/", {"n_node": 65, "t_cmpt": 1,
                                                      "machine": "m4", "per_node": True},
                                  format="json")
    assert too_many.status_code == 400 and "free nodes" in too_many.json()["errors"]["n_node"][0]
    no_machine = api("viewer").post("/api/v1/spares/", {**WORKED, "t_cmpt": 1,
                                                        "per_node": True}, format="json")
    assert no_machine.status_code == 400 and "per_node" in no_machine.json()["errors"]
