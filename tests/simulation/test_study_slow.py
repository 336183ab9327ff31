"""The whole reference study on two real workers (slow: ``make test-slow``).

Prints how many runs it took and how long; reruns then reuse every result.
"""

from __future__ import annotations

import time

import pytest

from hxportal.models import RunStatus
from simulation import services
from simulation.models import Sweep
from tests.workers import celery_worker, purge_broker, wait_for


@pytest.mark.slow
@pytest.mark.worker
@pytest.mark.timeout(7200)
@pytest.mark.django_db(transaction=True)
def test_reference_study_on_two_workers(tmp_path, users, capsys):
    purge_broker()
    with celery_worker(tmp_path / "worker.log", concurrency=2):
        started = time.monotonic()
        sweep = services.start_study(user=users["operator"], scale=1)
        wait_for(lambda: services.sweep_progress(sweep)["status"] not in ("pending", "running"),
                 timeout=7000, interval=2.0)
        elapsed = time.monotonic() - started
        again = services.start_study(user=users["operator"], scale=1, name="again")
        wait_for(lambda: services.sweep_progress(again)["status"] not in ("pending", "running"),
                 timeout=1200, interval=1.0)
        reused_elapsed = time.monotonic() - started - elapsed
    progress = services.sweep_progress(sweep)
    with capsys.disabled():
        print(f"\nstudy: {progress['total']} runs in {elapsed:.0f} s on 2 workers "
              f"({progress['failed']} failed); rerun reusing results: {reused_elapsed:.0f} s")
    assert progress["succeeded"] == progress["total"] == 2380
    rows = services.sweep_rows(Sweep.objects.get(pk=again.pk))
    assert all(r["reused_from"] for r in rows) and all(
        r["status"] == RunStatus.SUCCEEDED for r in rows)
