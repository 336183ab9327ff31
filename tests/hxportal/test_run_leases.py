"""The lease on a running tracked run, in one process: who may claim, store, recover.

The worker-process scenarios (a whole worker killed, a duplicate delivery while
a live process runs the row) are in ``test_stale_runs.py``.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from hxportal import recovery, runs
from hxportal.models import RunStatus
from simulation.models import SimulationRun
from simulation.services.configs import validate_config
from simulation.services.runs import new_run
from tests.simulation.conftest import TINY

pytestmark = pytest.mark.django_db
LEASE = 60


def _run(**fields) -> SimulationRun:
    run = new_run(validate_config(TINY))
    run.save()
    SimulationRun.objects.filter(pk=run.pk).update(**fields)
    run.refresh_from_db()
    return run


def _silent(seconds: float):
    return timezone.now() - timedelta(seconds=seconds)


@override_settings(HX_RUN_LEASE_SECONDS=LEASE)
def test_a_live_lease_turns_a_second_delivery_away():
    run = _run()
    held = runs.claim(SimulationRun, run.pk)
    assert held is not None and held.lease_token and held.attempts == 1
    assert runs.claim(SimulationRun, run.pk) is None, "a live process holds it"
    run.refresh_from_db()
    assert (run.attempts, run.lease_token) == (1, held.lease_token)


@override_settings(HX_RUN_LEASE_SECONDS=LEASE, HX_RUN_MAX_ATTEMPTS=3)
def test_a_silent_run_is_taken_over_and_the_old_claim_stores_nothing():
    run = _run()
    first = runs.claim(SimulationRun, run.pk)
    SimulationRun.objects.filter(pk=run.pk).update(heartbeat_at=_silent(LEASE + 1))
    second = runs.claim(SimulationRun, run.pk)
    assert second is not None and second.attempts == 2
    assert second.lease_token != first.lease_token
    assert "taken over" in second.log[-1]
    assert not runs.finish(SimulationRun, run.pk, status=RunStatus.SUCCEEDED, result={},
                           token=first.lease_token)
    assert runs.finish(SimulationRun, run.pk, status=RunStatus.SUCCEEDED, result={"ok": 1},
                       token=second.lease_token)
    run.refresh_from_db()
    assert (run.status, run.result) == (RunStatus.SUCCEEDED, {"ok": 1})


@override_settings(HX_RUN_LEASE_SECONDS=LEASE)
def test_the_reporter_stops_work_that_is_no_longer_its_own():
    run = _run()
    held = runs.claim(SimulationRun, run.pk)
    reporter = runs.RunReporter(held)
    reporter.log("working")
    SimulationRun.objects.filter(pk=run.pk).update(heartbeat_at=_silent(LEASE + 1))
    assert runs.claim(SimulationRun, run.pk) is not None  # taken over elsewhere
    with pytest.raises(runs.RunLost):
        reporter.log("still working")


@override_settings(HX_RUN_LEASE_SECONDS=LEASE, HX_RUN_MAX_ATTEMPTS=3)
def test_recovery_queues_a_silent_run_again(django_capture_on_commit_callbacks, monkeypatch):
    sent = []
    monkeypatch.setattr(runs, "_publish",
                        lambda name, pk, task_id, priority: sent.append((task_id, priority)))
    run = _run()
    runs.claim(SimulationRun, run.pk)
    fresh = _run()
    runs.claim(SimulationRun, fresh.pk)
    SimulationRun.objects.filter(pk=run.pk).update(heartbeat_at=_silent(LEASE + 1))
    with django_capture_on_commit_callbacks(execute=True):
        assert recovery.recover_stale() == 1
    run.refresh_from_db()
    assert (run.status, run.lease_token, run.attempts) == (RunStatus.PENDING, "", 1)
    assert "queued again" in run.log[-1] and run.sent_at is not None
    assert sent == [(run.task_id, runs.BEGUN_RUN_PRIORITY)]  # it had begun: it goes first
    assert SimulationRun.objects.get(pk=fresh.pk).status == RunStatus.RUNNING


@override_settings(HX_RUN_LEASE_SECONDS=LEASE, HX_RUN_MAX_ATTEMPTS=2)
def test_a_run_that_loses_its_worker_every_time_fails_with_the_reason():
    run = _run(status=RunStatus.RUNNING, attempts=2, lease_token="x" * 32,
               lease_owner="node7 pid 99", heartbeat_at=_silent(LEASE + 1))
    assert recovery.recover_stale() == 1
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and run.finished_at is not None
    assert "lost on each of 2 attempts" in run.error and "node7 pid 99" in run.error
    # a message delivered late finds it failed and does nothing
    assert runs.claim(SimulationRun, run.pk) is None


def test_a_pool_process_that_died_releases_its_run_at_once():
    run = _run()
    held = runs.claim(SimulationRun, run.pk)
    assert not recovery.release_lost(SimulationRun, run.pk, "elsewhere pid 1", timed_out=False)
    assert recovery.release_lost(SimulationRun, run.pk, held.lease_owner, timed_out=False)
    again = runs.claim(SimulationRun, run.pk)  # no need to wait for the lease to run out
    assert again is not None and again.attempts == 2


def test_a_pool_process_killed_at_the_hard_limit_fails_its_run():
    run = _run()
    held = runs.claim(SimulationRun, run.pk)
    assert recovery.release_lost(SimulationRun, run.pk, held.lease_owner, timed_out=True)
    run.refresh_from_db()
    assert (run.status, run.error) == (RunStatus.FAILED, "timeout")


def test_beat_recovers_stale_runs_every_minute_on_the_maintenance_queue():
    from django.conf import settings
    from django_celery_beat.models import PeriodicTask

    from hxportal.celery import app

    entry = PeriodicTask.objects.get(name="recover stale runs")
    assert entry.enabled and (entry.interval.every, entry.interval.period) == (1, "minutes")
    for entry in PeriodicTask.objects.all():  # every beat entry is maintenance
        assert app.amqp.router.route({}, entry.task)["queue"].name == \
            settings.HX_MAINTENANCE_QUEUE, entry.task


def test_a_continuation_queues_the_run_again_without_counting_an_attempt(
        django_capture_on_commit_callbacks):
    run = _run()
    held = runs.claim(SimulationRun, run.pk)
    first_start = held.started_at
    with django_capture_on_commit_callbacks(execute=False) as sent:
        assert runs.continue_later(SimulationRun, run.pk, held.lease_token, "goes on later")
    run.refresh_from_db()
    assert (run.status, run.lease_token, run.attempts, run.continued) == (
        RunStatus.PENDING, "", 0, 1)
    assert run.sent_at is None and len(sent) == 1 and run.log[-1].endswith("goes on later")
    again = runs.claim(SimulationRun, run.pk)
    assert again.attempts == 1 and again.started_at == first_start
    # a claim that lost the row (taken over, cancelled) queues nothing
    with django_capture_on_commit_callbacks(execute=False) as sent:
        assert not runs.continue_later(SimulationRun, run.pk, held.lease_token, "stale")
    assert not sent
    SimulationRun.objects.filter(pk=run.pk).update(status=RunStatus.CANCELLED)
    assert not runs.continue_later(SimulationRun, run.pk, again.lease_token, "cancelled")
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED and run.continued == 1


def test_begun_runs_and_predictions_are_queued_before_new_bulk_runs():
    from recommendations.models import PolicyPrediction

    assert runs.run_priority(SimulationRun()) == runs.NEW_RUN_PRIORITY
    assert runs.run_priority(SimulationRun(started_at=timezone.now())) == runs.BEGUN_RUN_PRIORITY
    assert runs.run_priority(PolicyPrediction()) == runs.BEGUN_RUN_PRIORITY  # a 30 s deadline
    assert runs.BEGUN_RUN_PRIORITY < runs.NEW_RUN_PRIORITY  # 0 is taken first
