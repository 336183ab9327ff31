"""Broker down at submission: the API still answers 202, the run stays queued, and
the scheduled sweeper sends it when the broker is back (a real worker then runs it)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from kombu.exceptions import OperationalError

from hxportal import runs
from simulation import tasks as simulation_tasks
from simulation.models import SimulationRun
from tests.workers import celery_worker, purge_broker, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]
CONFIG = {"sides": [2, 2], "concentration": 2, "ranks": 8, "pattern": "uniform",
          "packets_per_task": 4, "max_cycles": 20_000}


def test_run_submitted_while_broker_is_down_is_sent_later(api, monkeypatch, tmp_path):
    def broker_down(*args, **kwargs):
        raise OperationalError("Error 111 connecting to broker. Connection refused.")

    purge_broker()
    with monkeypatch.context() as patch:
        patch.setattr(simulation_tasks.run_simulation, "apply_async", broker_down)
        response = api("operator").post("/api/v1/simulation-runs/", {"config": CONFIG},
                                        format="json")
    assert response.status_code == 202, response.content
    run = SimulationRun.objects.get(pk=response.json()["id"])
    assert (run.status, run.sent_at) == ("pending", None)

    assert runs.resend_unsent() == 0, "too young: its message may still be on its way"
    SimulationRun.objects.filter(pk=run.pk).update(
        created_at=timezone.now() - timedelta(minutes=2))
    with celery_worker(tmp_path / "worker.log"):
        assert runs.resend_unsent() == 1
        run.refresh_from_db()
        assert run.sent_at is not None
        wait_for(lambda: SimulationRun.objects.get(pk=run.pk).status == "succeeded", 90)
    assert runs.resend_unsent() == 0
    run.refresh_from_db()
    assert run.attempts == 1 and run.result["cycles"] > 0
