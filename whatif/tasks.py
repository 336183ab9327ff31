"""Thin Celery task: a run id in, one service call (the row is the truth)."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from hxportal.runs import RUN_TASK_REQUEST
from whatif import services


@shared_task(name="whatif.tasks.run_scenario", Request=RUN_TASK_REQUEST,
             bind=True, acks_late=True, soft_time_limit=settings.CELERY_TASK_SOFT_TIME_LIMIT,
             time_limit=settings.CELERY_TASK_TIME_LIMIT)
def run_scenario(self, run_id: int) -> str | None:
    """Replay one scenario and seed of a what-if study."""
    return services.execute_run(run_id)
