"""Simulation runs through the broker and real Celery worker processes.

``test_runs_and_a_sweep_on_real_workers`` runs in both passes (SQLite +
filesystem broker, PostgreSQL + Redis). The kill test needs PostgreSQL and
Redis: it SIGKILLs the worker's pool process in the middle of a simulation and
shows the redelivered task finishes the run exactly once.
"""

from __future__ import annotations

import os
import signal
import time

import pytest
from django.conf import settings

from hxportal.models import RunStatus
from simulation import services, tasks
from simulation.engine import SimConfig, simulate
from simulation.models import SimulationRun
from simulation.services import checkpoints
from simulation.services.runs import stored_partitions
from tests.conftest import skip_or_fail
from tests.simulation.conftest import TINY
from tests.workers import celery_worker, pool_children, purge_broker, wait_for

#: A full 8x8, c = 8 machine under uniform load for a fixed number of cycles:
#: several seconds of simulation, so a kill lands in the middle.
LONG = {"ranks": 512, "pattern": "uniform", "rate": 0.8, "max_cycles": 40_000}
#: Four times as long (about 7 s here): several slices, or a checkpoint before a kill.
LONGER = {**LONG, "max_cycles": 160_000}


def _log_tail(tmp_path) -> str:
    return (tmp_path / "worker.log").read_text()[-4000:]


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_runs_and_a_sweep_on_real_workers(tmp_path, api, users):
    purge_broker()
    with celery_worker(tmp_path / "worker.log", concurrency=2):
        response = api("operator").post("/api/v1/simulation-runs/", {"config": TINY},
                                        format="json")
        assert response.status_code == 202, response.content
        run_id = response.json()["id"]
        sweep = api("operator").post("/api/v1/sweeps/", {
            "name": "fan-out", "base": TINY,
            "parameters": {"policy": ["row", "diagonal"], "seed": [1, 2]}}, format="json")
        assert sweep.status_code == 202, sweep.content
        sweep_id = sweep.json()["id"]
        try:
            wait_for(lambda: api("viewer").get(f"/api/v1/sweeps/{sweep_id}/").json()[
                "status"] == "succeeded" and SimulationRun.objects.get(pk=run_id).is_terminal,
                timeout=180)
        except AssertionError:
            pytest.fail("runs did not finish; worker log:\n" + _log_tail(tmp_path))
    run = SimulationRun.objects.get(pk=run_id)
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.attempts == 1 and run.progress == 1.0 and run.wall_seconds is not None
    assert run.result["makespan_cycles"] > 0
    detail = api("viewer").get(f"/api/v1/sweeps/{sweep_id}/").json()
    assert detail["progress"]["done"] == 4 and detail["progress"]["failed"] == 0
    assert all(r["makespan_cycles"] for r in detail["results"])
    assert "simulation.tasks.run_simulation" in (tmp_path / "worker.log").read_text()


@pytest.mark.worker
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_killed_pool_process_the_run_finishes_exactly_once(tmp_path, on_postgres, users):
    if not settings.CELERY_BROKER_URL.startswith("redis://"):
        skip_or_fail("needs the Redis broker: run with CELERY_BROKER_URL=redis://...")
    purge_broker()
    with celery_worker(tmp_path / "worker.log", concurrency=1) as worker:
        run = services.start_run(LONG, user=users["operator"])
        try:
            wait_for(lambda: SimulationRun.objects.filter(
                pk=run.pk, status=RunStatus.RUNNING, progress__gt=0.05).exists(), timeout=120)
        except AssertionError:
            pytest.fail("run never got going; worker log:\n" + _log_tail(tmp_path))
        children = pool_children(worker.pid)
        assert len(children) == 1, children
        os.kill(children[0], signal.SIGKILL)
        try:
            wait_for(lambda: SimulationRun.objects.get(pk=run.pk).is_terminal, timeout=300)
        except AssertionError:
            pytest.fail("run did not finish after the kill; worker log:\n" + _log_tail(tmp_path))
        assert pool_children(worker.pid) != children  # the pool replaced its process
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.attempts >= 2
    assert sum("simulating" in line for line in run.log) == run.attempts
    assert sum(line.split(" ", 1)[1].startswith("done in") for line in run.log) == 1
    assert run.result["cycles"] == LONG["max_cycles"] and run.progress == 1.0
    assert SimulationRun.objects.filter(config_hash=run.config_hash).count() == 1
    log = (tmp_path / "worker.log").read_text()
    assert "signal 9" in log or "SIGKILL" in log or "WorkerLostError" in log, log[-3000:]


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_soft_time_limit_fails_the_run_with_timeout(tmp_path, users, monkeypatch):
    # The sender's task options travel in the message (both sides read the same settings).
    monkeypatch.setattr(tasks.run_simulation, "soft_time_limit", 1)
    monkeypatch.setattr(tasks.run_simulation, "time_limit", 60)
    monkeypatch.setattr(tasks.run_simulation, "_exec_options", None)  # Celery's cache
    purge_broker()
    env = {"HX_TASK_SOFT_TIME_LIMIT": "1", "HX_TASK_TIME_LIMIT": "60"}
    with celery_worker(tmp_path / "worker.log", extra_env=env):
        run = services.start_run({**LONG, "max_cycles": 200_000}, user=users["operator"])
        try:
            wait_for(lambda: SimulationRun.objects.get(pk=run.pk).is_terminal, timeout=120)
        except AssertionError:
            pytest.fail("run did not stop; worker log:\n" + _log_tail(tmp_path))
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and run.error == "timeout", (run.status, run.error)
    assert run.result is None and run.attempts == 1


@pytest.mark.worker
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_whole_worker_killed_and_restarted_the_run_finishes_exactly_once(
        tmp_path, on_postgres, users):
    """SIGKILL the whole worker (main process and pool) mid-run, then start another:
    the unacknowledged message comes back after the visibility timeout (here 10 s;
    in production the hard time limit + 600 s) while the new worker also queues
    the silent run again (its lease, here 5 s, ran out): of the two messages one
    runs it, and the run finishes once."""
    if not settings.CELERY_BROKER_URL.startswith("redis://"):
        skip_or_fail("needs the Redis broker: run with CELERY_BROKER_URL=redis://...")
    purge_broker()
    quick_redelivery = {"HX_VISIBILITY_TIMEOUT": "10", "HX_RUN_LEASE_SECONDS": "5"}
    with celery_worker(tmp_path / "first.log", extra_env=quick_redelivery) as worker:
        run = services.start_run(LONG, user=users["operator"])
        wait_for(lambda: SimulationRun.objects.filter(
            pk=run.pk, status=RunStatus.RUNNING, progress__gt=0.05).exists(), timeout=120)
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)
    assert SimulationRun.objects.get(pk=run.pk).status == RunStatus.RUNNING
    time.sleep(11)  # past the visibility timeout: the next worker restores it at start
    with celery_worker(tmp_path / "worker.log", extra_env=quick_redelivery):
        try:
            wait_for(lambda: SimulationRun.objects.get(pk=run.pk).is_terminal, timeout=180)
        except AssertionError:
            pytest.fail("run did not finish after the restart:\n" + _log_tail(tmp_path))
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.attempts == 2
    assert sum(line.split(" ", 1)[1].startswith("done in") for line in run.log) == 1
    assert SimulationRun.objects.filter(config_hash=run.config_hash).count() == 1


def _uninterrupted(run: SimulationRun) -> dict:
    """The run's result from one simulation in this process (timing aside)."""
    cfg = SimConfig.from_dict(run.config)
    return _timeless(simulate(cfg, stored_partitions(run.parameters)).as_dict())


def _timeless(result: dict) -> dict:
    return {k: v for k, v in result.items() if k not in ("wall_seconds", "cpu_seconds")}


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_long_run_continues_in_new_tasks_from_its_checkpoints(tmp_path, users, settings):
    """Slices of 2 s through the real broker: each task saves the run's state and queues
    the next, which resumes from it; the run ends with one simulation's result."""
    settings.HX_CHECKPOINT_DIR = tmp_path / "checkpoints"
    env = {"HX_SIM_SLICE_SECONDS": "2", "HX_SIM_CHECKPOINT_SECONDS": "600",
           "HX_CHECKPOINT_DIR": str(settings.HX_CHECKPOINT_DIR)}
    purge_broker()
    with celery_worker(tmp_path / "worker.log", extra_env=env):
        run = services.start_run(LONGER, user=users["operator"])
        try:
            wait_for(lambda: SimulationRun.objects.get(pk=run.pk).is_terminal, timeout=300)
        except AssertionError:
            pytest.fail("run did not finish; worker log:\n" + _log_tail(tmp_path))
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.continued >= 1 and run.attempts == 1, (run.continued, run.log)
    assert sum("resuming from its checkpoint" in line for line in run.log) == run.continued
    assert _timeless(run.result) == _uninterrupted(run)
    assert run.result["cycles"] == LONGER["max_cycles"] and run.progress == 1.0
    assert not any(settings.HX_CHECKPOINT_DIR.iterdir())


@pytest.mark.worker
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_killed_pool_process_the_run_resumes_from_its_checkpoint(tmp_path, on_postgres,
                                                                  users, settings):
    """SIGKILL the pool process after the run saved its state: the redelivered task
    resumes from the save, not from cycle 0, and the result is one simulation's."""
    if not settings.CELERY_BROKER_URL.startswith("redis://"):
        skip_or_fail("needs the Redis broker: run with CELERY_BROKER_URL=redis://...")
    settings.HX_CHECKPOINT_DIR = tmp_path / "checkpoints"
    env = {"HX_SIM_CHECKPOINT_SECONDS": "1", "HX_SIM_SLICE_SECONDS": "0",
           "HX_CHECKPOINT_DIR": str(settings.HX_CHECKPOINT_DIR)}
    purge_broker()
    with celery_worker(tmp_path / "worker.log", concurrency=1, extra_env=env) as worker:
        run = services.start_run(LONGER, user=users["operator"])
        try:
            wait_for(lambda: any("checkpoint at cycle" in line for line in
                                 SimulationRun.objects.get(pk=run.pk).log), timeout=120)
        except AssertionError:
            pytest.fail("no checkpoint was saved; worker log:\n" + _log_tail(tmp_path))
        # read first: a later save before the kill only raises the cycle resumed from
        saved_before_kill = checkpoints.read(checkpoints.path_for(run.pk)).state.cycle
        os.kill(pool_children(worker.pid)[0], signal.SIGKILL)
        try:
            wait_for(lambda: SimulationRun.objects.get(pk=run.pk).is_terminal, timeout=300)
        except AssertionError:
            pytest.fail("run did not finish after the kill; worker log:\n" + _log_tail(tmp_path))
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.attempts >= 2 and run.continued == 0
    resumed = [line for line in run.log if "resuming from its checkpoint at cycle" in line]
    assert resumed, run.log
    assert int(resumed[0].split("at cycle ")[1].split(" ")[0].replace(",", "")) \
        >= saved_before_kill > 0
    assert _timeless(run.result) == _uninterrupted(run)
    assert not checkpoints.path_for(run.pk).exists()


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_long_runs_slices_keep_its_place_before_runs_queued_after_it(tmp_path, users,
                                                                      settings):
    """One pool process, 3 s slices: runs submitted while a long run's first slice runs
    wait until its last slice ends, since its continuations go first (priority 0, on
    Redis and on the zero-setup broker); at the back of the queue they went after them."""
    settings.HX_CHECKPOINT_DIR = tmp_path / "checkpoints"
    env = {"HX_SIM_SLICE_SECONDS": "3", "HX_SIM_CHECKPOINT_SECONDS": "600",
           "HX_CHECKPOINT_DIR": str(settings.HX_CHECKPOINT_DIR)}
    purge_broker()
    with celery_worker(tmp_path / "worker.log", concurrency=1, extra_env=env):
        long_run = services.start_run(LONGER, user=users["operator"])
        wait_for(lambda: SimulationRun.objects.get(pk=long_run.pk).status == "running",
                 timeout=120)
        later = [services.start_run({**TINY, "seed": seed}, user=users["operator"])
                 for seed in (11, 12, 13)]
        ids = [long_run.pk, *(run.pk for run in later)]
        try:
            wait_for(lambda: all(SimulationRun.objects.get(pk=pk).is_terminal for pk in ids),
                     timeout=300)
        except AssertionError:
            pytest.fail("runs did not finish; worker log:\n" + _log_tail(tmp_path))
    long_run.refresh_from_db()
    assert long_run.status == RunStatus.SUCCEEDED and long_run.continued >= 1, long_run.log
    for run in later:
        run.refresh_from_db()
        assert run.status == RunStatus.SUCCEEDED, run.error
        assert run.started_at > long_run.finished_at, (run.pk, long_run.log)


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGQUIT], ids=["warm", "cold"])
def test_a_stopping_worker_hands_its_run_over_and_the_next_worker_resumes_it(
        tmp_path, users, settings, stop):
    """SIGTERM to the worker (Celery's warm shutdown, which waited for the run to end) or
    SIGQUIT (the cold one, which killed it after 3 s and lost the run's work since its
    last periodic save): the pool process saves the run after its current chunk and
    queues it again, and the next worker resumes from that save."""
    settings.HX_CHECKPOINT_DIR = tmp_path / "checkpoints"
    env = {"HX_SIM_CHECKPOINT_SECONDS": "600", "HX_SIM_SLICE_SECONDS": "0",
           "HX_CHECKPOINT_DIR": str(settings.HX_CHECKPOINT_DIR)}
    config = {**LONG, "max_cycles": 400_000}
    purge_broker()
    with celery_worker(tmp_path / "worker.log", concurrency=1, extra_env=env) as worker:
        run = services.start_run(config, user=users["operator"])
        wait_for(lambda: SimulationRun.objects.filter(
            pk=run.pk, status=RunStatus.RUNNING, progress__gt=0.02).exists(), timeout=120)
        worker.send_signal(stop)
        worker.wait(timeout=120)
    run.refresh_from_db()
    # without the hand-over a warm shutdown runs it to the end, a cold one leaves it running;
    # once handed over it is not taken back by the stopping worker (a warm shutdown polled
    # on, and took it straight back two or three times, each a load and a save)
    assert run.status == RunStatus.PENDING and run.continued == 1, (run.log, _log_tail(tmp_path))
    assert "the worker is stopping: continues in a new task" in run.log[-1], run.log
    saved = checkpoints.read(checkpoints.path_for(run.pk)).state.cycle
    assert 0 < saved < config["max_cycles"]
    with celery_worker(tmp_path / "worker.log", concurrency=1, extra_env=env):
        try:
            wait_for(lambda: SimulationRun.objects.get(pk=run.pk).is_terminal, timeout=300)
        except AssertionError:
            pytest.fail("run did not finish; worker log:\n" + _log_tail(tmp_path))
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED and run.attempts == 1, run.log
    assert f"resuming from its checkpoint at cycle {saved:,}" in "\n".join(run.log)
    assert run.result["cycles"] == config["max_cycles"]
