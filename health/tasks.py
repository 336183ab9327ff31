"""Thin Celery tasks of node health: ids in, one service call (the row is the truth).

The names are the ones these tasks had before the health app was split out of
allocation: queued messages and beat rows carry them, so they never change.
"""

from __future__ import annotations

from celery import shared_task

from health import services
from health.constants import ESTIMATE_ALL_MACHINES_TASK, RUN_ESTIMATION_TASK
from health.models import EstimationRun
from hxportal.runs import RUN_TASK_REQUEST, execute


@shared_task(name=RUN_ESTIMATION_TASK, Request=RUN_TASK_REQUEST,
             bind=True, acks_late=True, soft_time_limit=1800, time_limit=1900)
def run_estimation(self, run_id: int) -> str | None:
    """Estimate p_abn, alpha_abn and t_bench for one EstimationRun row."""
    return execute(EstimationRun, run_id, services.estimate_work,
                   on_success=services.store_estimates)


@shared_task(name=ESTIMATE_ALL_MACHINES_TASK,
             bind=True, acks_late=True, soft_time_limit=300, time_limit=360)
def estimate_all_machines(self, window_days: int = 30) -> list[int]:
    """The beat entry: one estimation run per machine with recent results."""
    return [run.pk for run in services.start_all_estimations(window_days)]
