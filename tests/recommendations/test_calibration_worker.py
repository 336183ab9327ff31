"""A calibration end to end on a real worker: started over the API, its runs made by
the prepare task and simulated by the worker's processes, then a recommendation too
large for its deadline answered from it (and a killed worker loses nothing)."""

from __future__ import annotations

import pytest

from allocation.services import jobs, machines
from recommendations import constants as recommendation_constants
from recommendations.models import Calibration
from simulation.models import SimulationRun
from tests.workers import celery_worker, purge_broker, wait_for

GRID = {"patterns": ["all2all"], "sizes": [8, 16], "loads": [0.5], "seeds": [0, 1],
        "policies": ["row", "diagonal", "random_switch", "full_spread"]}


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_calibration_runs_on_a_worker_and_answers(tmp_path, api, users, monkeypatch):
    machine = machines.create_machine(name="half", sides=[4, 4], concentration=4)
    jobs.submit_job(owner=users["admin"], machine=machine, name="bg", node_count=32,
                    pattern="all2all", policy="row")
    purge_broker()
    log_path = tmp_path / "worker.log"
    with celery_worker(log_path, concurrency=2):
        body = api("operator").post("/api/v1/calibrations/", {"machine": "half", **GRID},
                                    format="json").json()

        def ready() -> dict | None:
            state = api("viewer").get(f"/api/v1/calibrations/{body['id']}/").json()
            return state if state["status"] != "running" else None

        try:
            state = wait_for(ready, timeout=180)
        except AssertionError:
            pytest.fail("calibration not ready; worker log:\n" + log_path.read_text()[-4000:])
    assert state["status"] == "ready" and state["points_done"] == state["run_count"] == 16
    assert state["progress"]["done"] == 16 and state["sweep"] is not None
    runs = SimulationRun.objects.filter(sweep_id=state["sweep"])
    assert runs.count() == 16 and set(runs.values_list("status", flat=True)) == {"succeeded"}
    monkeypatch.setattr(recommendation_constants, "LIVE_DEADLINE_SHARE", 0.0)
    answer = api("operator").post("/api/v1/recommendations/", {
        "machine": "half", "node_count": 12, "pattern": "all2all", "t_cmpt": 100,
        "t_comm": 50}, format="json").json()
    assert answer["status"] == "ready" and answer["method"] == "calibrated"
    assert answer["calibration"]["id"] == Calibration.objects.get().pk
    assert {e["policy"] for e in answer["ranking"] if e.get("predicted_cycles")} == \
        set(GRID["policies"])
