"""An estimation run end to end through the broker and a real Celery worker process."""

from __future__ import annotations

import pytest

from allocation.models import Estimate, EstimationRun
from hxportal.models import RunStatus
from tests.allocation.test_health_spares import seed_history
from tests.workers import celery_worker, purge_broker, wait_for


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_estimation_run_on_a_real_worker(tmp_path, api, machine, users):
    seed_history(machine, users["operator"], n_jobs=30)
    purge_broker()
    with celery_worker(tmp_path / "worker.log"):
        response = api("operator").post("/api/v1/estimation-runs/",
                                        {"machine": "m4", "window_days": 30}, format="json")
        assert response.status_code == 202, response.content
        run_id = response.json()["id"]
        try:
            wait_for(lambda: EstimationRun.objects.get(pk=run_id).is_terminal, timeout=120)
        except AssertionError:
            pytest.fail("run did not finish; worker log:\n"
                        + (tmp_path / "worker.log").read_text()[-4000:])
    run = EstimationRun.objects.get(pk=run_id)
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.attempts == 1 and run.progress == 1.0
    assert any("480 node-runs" in line for line in run.log), run.log
    estimate = Estimate.objects.get(run=run)
    assert (estimate.machine_id, estimate.benchmark, estimate.runs) == (machine.pk, "stream", 480)
    assert estimate.t_bench == pytest.approx(0.0167, rel=0.02)
    assert estimate.alpha_abn == pytest.approx(3.5, rel=0.1)
    assert estimate.p_abn_low <= estimate.p_abn <= estimate.p_abn_high
    assert "run_estimation" in (tmp_path / "worker.log").read_text()
