"""Estimation runs end to end through the broker and real Celery worker processes,
including a pool process killed mid-run."""

from __future__ import annotations

import os
import signal
import time

import pytest
from django.conf import settings

from allocation.models import Job
from allocation.services import machines
from health import services as health
from health.models import Estimate, EstimationRun
from hxportal.models import RunStatus
from tests.conftest import skip_or_fail
from tests.health.test_health_spares import seed_history
from tests.workers import celery_worker, pool_children, purge_broker, wait_for


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


def big_history(owner):
    """A 16x16, c = 16 machine with 102,400 benchmark runs in five benchmarks: an
    estimation long enough to be killed in the middle (needs Redis: acks_late and
    redelivery of an unacknowledged message)."""
    if not settings.CELERY_BROKER_URL.startswith("redis://"):
        skip_or_fail("needs the Redis broker: run with CELERY_BROKER_URL=redis://...")
    machine = machines.create_machine(name="big", sides=[16, 16], concentration=16)
    names = list(machine.nodes.order_by("index").values_list("hostname", flat=True))
    jobs = [Job.objects.create(name=f"j{i}", owner=owner, machine=machine,
                               node_count=512) for i in range(40)]
    for benchmark in ("stream", "dgemm", "ping", "io", "fft"):
        lines = ["job,benchmark,node,seconds"]
        for k, job in enumerate(jobs):
            for j, host in enumerate(names[(k * 97) % 3584:][:512]):
                slow = 3.5 if (j * 7 + k) % 50 == 0 else 1.0
                lines.append(f"{job.pk},{benchmark},{host},{0.0167 * slow * (1 + j % 5 / 500)}")
        health.ingest_csv("\n".join(lines))
    return machine


@pytest.mark.worker
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_pool_process_killed_mid_estimation_finishes_once(tmp_path, on_postgres, users):
    """SIGKILL the worker's pool process while an estimation runs: the redelivered
    task estimates again and the estimates are stored exactly once."""
    machine = big_history(users["operator"])
    purge_broker()
    with celery_worker(tmp_path / "worker.log", concurrency=1) as worker:
        run = health.start_estimation(machine, window_days=30)
        wait_for(lambda: EstimationRun.objects.filter(pk=run.pk,
                                                      status=RunStatus.RUNNING).exists(), 120)
        children = pool_children(worker.pid)
        os.kill(children[0], signal.SIGKILL)
        wait_for(lambda: EstimationRun.objects.get(pk=run.pk).is_terminal, timeout=180)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.attempts == 2, run.log
    assert Estimate.objects.filter(run=run).count() == 5, "one estimate per benchmark, once"


@pytest.mark.worker
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_whole_worker_killed_mid_estimation_and_restarted_finishes_once(
        tmp_path, on_postgres, users):
    """SIGKILL the whole worker (main process and pool) mid-estimation, then start
    another: the unacknowledged message returns after the visibility timeout (10 s
    here; the hard time limit + 600 s in production), the new worker also queues
    the silent run again (its lease, 5 s here, ran out), and the estimates are
    stored once. Bound: visibility timeout + one estimation (asserted under 180 s)."""
    machine = big_history(users["operator"])
    purge_broker()
    quick_redelivery = {"HX_VISIBILITY_TIMEOUT": "10", "HX_RUN_LEASE_SECONDS": "5"}
    with celery_worker(tmp_path / "first.log", extra_env=quick_redelivery,
                       concurrency=1) as worker:
        run = health.start_estimation(machine, window_days=30)
        wait_for(lambda: EstimationRun.objects.filter(pk=run.pk,
                                                      status=RunStatus.RUNNING).exists(), 120)
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)
    killed_at = time.monotonic()
    assert EstimationRun.objects.get(pk=run.pk).status == RunStatus.RUNNING
    assert not Estimate.objects.filter(run=run).exists()
    time.sleep(11)  # past the visibility timeout: the next worker restores it at start
    with celery_worker(tmp_path / "second.log", extra_env=quick_redelivery):
        try:
            wait_for(lambda: EstimationRun.objects.get(pk=run.pk).is_terminal, timeout=180)
        except AssertionError:
            pytest.fail("run did not finish after the restart:\n"
                        + (tmp_path / "second.log").read_text()[-4000:])
    assert time.monotonic() - killed_at < 180
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.attempts == 2, run.log
    assert Estimate.objects.filter(run=run).count() == 5, "one estimate per benchmark, once"
    assert EstimationRun.objects.count() == 1
