"""Maintenance does not wait behind a backlog of simulations (real worker processes).

Beat's tasks (re-send, recover, expire) go to the ``hx-maintenance`` queue and
recommendation predictions to ``hx-interactive``; bulk runs stay on the default
queue. A worker consuming all three takes from each in turn, and the second
worker of scripts/run.sh / docker-compose.yml, consuming only the two short
queues, answers them while every process of the main worker is busy.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from hxportal.celery import app
from hxportal.models import RunStatus
from simulation import services
from simulation.models import SimulationRun
from simulation.services.configs import validate_config
from simulation.services.runs import new_run
from tests.simulation.conftest import TINY
from tests.workers import celery_worker, purge_broker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
RESEND = "hxportal.tasks.resend_unsent_runs"


def _unsent_probe() -> SimulationRun:
    """A run whose message never reached the broker: the re-send task sends it, so its
    ``sent_at`` says when that maintenance task ran."""
    run = new_run(validate_config({**TINY, "seed": 999}))
    run.save()
    SimulationRun.objects.filter(pk=run.pk).update(
        created_at=timezone.now() - timedelta(minutes=2))
    return run


def _sent_at(probe: SimulationRun):
    return SimulationRun.objects.filter(pk=probe.pk).values_list("sent_at", flat=True)[0]


def test_maintenance_is_taken_before_a_backlog_of_runs(tmp_path, users):
    """50 runs queued, then beat's re-send: one worker process takes the re-send
    after at most a few runs, not after the 50."""
    purge_broker()
    sweep = services.create_sweep(name="backlog", base=TINY,
                                  parameters={"seed": list(range(1, 51))})
    probe = _unsent_probe()
    app.send_task(RESEND)  # as beat sends it
    with celery_worker(tmp_path / "worker.log"):
        try:
            sent_at = wait_for(lambda: _sent_at(probe), timeout=80)
        except AssertionError:
            pytest.fail("the re-send never ran:\n" + (tmp_path / "worker.log").read_text()[-3000:])
    before = sweep.runs.filter(finished_at__lte=sent_at).count()
    assert before <= 5, f"{before} of 50 backlog runs finished before the re-send ran"


def test_a_second_worker_answers_maintenance_while_the_main_one_is_busy(tmp_path, users):
    """Every process of the main worker runs a long simulation; the small worker
    consuming the short queues runs beat's re-send meanwhile."""
    purge_broker()
    short = (settings.HX_INTERACTIVE_QUEUE, settings.HX_MAINTENANCE_QUEUE)
    with celery_worker(tmp_path / "main.log", name="main"), \
            celery_worker(tmp_path / "short.log", queues=short, name="short"):
        long_run = services.start_run({"ranks": 512, "pattern": "uniform", "rate": 0.8,
                                       "max_cycles": 150_000}, user=users["operator"])
        wait_for(lambda: SimulationRun.objects.filter(
            pk=long_run.pk, status=RunStatus.RUNNING, progress__gt=0.01).exists(), timeout=60)
        probe = _unsent_probe()
        app.send_task(RESEND)
        try:
            sent_at = wait_for(lambda: _sent_at(probe), timeout=80)
        except AssertionError:
            pytest.fail("the re-send never ran:\n" + (tmp_path / "short.log").read_text()[-3000:])
        long_run.refresh_from_db()
        assert long_run.finished_at is None or long_run.finished_at > sent_at, (
            "the re-send waited for the long run")
