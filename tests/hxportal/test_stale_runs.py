"""Workers killed outright, and duplicate deliveries, on real worker processes.

A whole worker killed with SIGKILL cannot requeue its messages: with Redis they
come back only after the visibility timeout (the hard time limit + 600 s). The
run's lease (``HX_RUN_LEASE_SECONDS``, here a few seconds) lets the next worker
to start recover it within one lease instead. Both passes run these (SQLite +
filesystem broker, PostgreSQL + Redis).
"""

from __future__ import annotations

import os
import signal

import pytest
from django.test import override_settings

from hxportal import recovery, runs
from hxportal.models import RunStatus
from simulation import services, tasks
from simulation.models import SimulationRun
from tests.workers import celery_worker, purge_broker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

#: Several seconds of simulation on a full 8x8, c = 8 machine (as in test_worker.py).
LONG = {"ranks": 512, "pattern": "uniform", "rate": 0.8, "max_cycles": 40_000}


def _tail(path) -> str:
    return path.read_text()[-4000:]


def _done_lines(run: SimulationRun) -> int:
    return sum(line.split(" ", 1)[1].startswith("done in") for line in run.log)


def test_a_run_of_a_worker_killed_outright_finishes_after_a_restart(tmp_path, users):
    lease = {"HX_RUN_LEASE_SECONDS": "5"}
    purge_broker()
    with celery_worker(tmp_path / "first.log", extra_env=lease) as worker:
        run = services.start_run(LONG, user=users["operator"])
        try:
            wait_for(lambda: SimulationRun.objects.filter(
                pk=run.pk, status=RunStatus.RUNNING, progress__gt=0.05).exists(), timeout=60)
        except AssertionError:
            pytest.fail("run never got going:\n" + _tail(tmp_path / "first.log"))
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)
    assert SimulationRun.objects.get(pk=run.pk).status == RunStatus.RUNNING
    with celery_worker(tmp_path / "second.log", extra_env=lease):
        try:
            wait_for(lambda: SimulationRun.objects.get(pk=run.pk).is_terminal, timeout=60)
        except AssertionError:
            pytest.fail("the run was not recovered:\n" + _tail(tmp_path / "second.log"))
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.attempts == 2
    assert any("lost its worker" in line for line in run.log), run.log
    assert _done_lines(run) == 1 and run.result["cycles"] == LONG["max_cycles"]


def test_a_duplicate_delivery_never_runs_a_run_a_live_worker_holds(tmp_path, users):
    """A second message for a running row (the original redelivered, or one queued
    again) finds it held: the heartbeat keeps the lease although the run lasts
    several leases, and neither recovery nor the duplicate touches it."""
    lease = 2
    purge_broker()
    with celery_worker(tmp_path / "worker.log", concurrency=2,
                       extra_env={"HX_RUN_LEASE_SECONDS": str(lease)}):
        # Cycles enough to outlast 2 leases on a fast, quiet machine (100,000 took 3.8 s in CI).
        run = services.start_run({**LONG, "max_cycles": 400_000}, user=users["operator"])
        wait_for(lambda: SimulationRun.objects.filter(
            pk=run.pk, status=RunStatus.RUNNING, progress__gt=0.01).exists(), timeout=60)
        runs._publish(tasks.run_simulation.name, run.pk, run.task_id,  # the duplicate
                      runs.NEW_RUN_PRIORITY)
        recovered = []
        with override_settings(HX_RUN_LEASE_SECONDS=lease):
            def finished_meanwhile() -> bool:
                recovered.append(recovery.recover_stale())
                return SimulationRun.objects.get(pk=run.pk).is_terminal

            try:
                wait_for(finished_meanwhile, timeout=240, interval=0.5)
            except AssertionError:
                pytest.fail("run did not finish:\n" + _tail(tmp_path / "worker.log"))
        log = (tmp_path / "worker.log").read_text()
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.attempts == 1 and _done_lines(run) == 1, run.log
    assert sum("simulating" in line for line in run.log) == 1
    assert run.duration_seconds > 2 * lease, "the run must outlast its lease to show anything"
    assert not any(recovered), "a run that beats is never stale"
    assert "this delivery leaves it" in log


def test_a_run_killed_at_the_hard_time_limit_fails_with_timeout(tmp_path, users, monkeypatch):
    """The hard limit kills the pool process; its worker fails the run at once (a new
    attempt would meet the same limit) instead of leaving it running. No soft limit
    here, as when its exception cannot stop the work (the soft-limit path is
    ``tests/simulation/test_worker.py``)."""
    monkeypatch.setattr(tasks.run_simulation, "soft_time_limit", None)
    monkeypatch.setattr(tasks.run_simulation, "time_limit", 2)
    monkeypatch.setattr(tasks.run_simulation, "_exec_options", None)  # Celery's cache
    purge_broker()
    with celery_worker(tmp_path / "worker.log", extra_env={"HX_TASK_SOFT_TIME_LIMIT": "0"}):
        run = services.start_run({**LONG, "max_cycles": 400_000}, user=users["operator"])
        try:
            wait_for(lambda: SimulationRun.objects.get(pk=run.pk).is_terminal, timeout=60)
        except AssertionError:
            pytest.fail("run still running:\n" + _tail(tmp_path / "worker.log"))
    run.refresh_from_db()
    assert (run.status, run.error, run.attempts) == (RunStatus.FAILED, "timeout", 1)
