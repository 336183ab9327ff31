"""Thin Celery tasks: ids in, one service call (the row is the truth).

Late acks with ``task_reject_on_worker_lost`` (settings) redeliver a run whose
worker process died; :func:`hxportal.runs.execute` makes the redelivery of a
finished run a no-op. The soft limit fails the run with ``"timeout"``; the
broker's visibility timeout is longer than the hard limit (settings).
"""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from hxportal.runs import RUN_TASK_REQUEST
from simulation import services


@shared_task(name="simulation.tasks.run_simulation", Request=RUN_TASK_REQUEST,
             bind=True, acks_late=True, soft_time_limit=settings.CELERY_TASK_SOFT_TIME_LIMIT,
             time_limit=settings.CELERY_TASK_TIME_LIMIT)
def run_simulation(self, run_id: int) -> str | None:
    """Simulate one SimulationRun row (or copy an identical stored result)."""
    return services.execute_run(run_id)
