"""Thin Celery tasks: ids in, one service call (the row is the truth)."""

from __future__ import annotations

from celery import shared_task

from allocation import health, recommendations
from allocation.models import EstimationRun
from hxportal.runs import execute


@shared_task(name="allocation.tasks.run_estimation",
              bind=True, acks_late=True, soft_time_limit=1800, time_limit=1900)
def run_estimation(self, run_id: int) -> str | None:
    """Estimate p_abn, alpha_abn and t_bench for one EstimationRun row."""
    return execute(EstimationRun, run_id, health.estimate_work,
                   on_success=health.store_estimates)


@shared_task(name="allocation.tasks.estimate_all_machines",
              bind=True, acks_late=True, soft_time_limit=300, time_limit=360)
def estimate_all_machines(self, window_days: int = 30) -> list[int]:
    """The beat entry: one estimation run per machine with recent results."""
    return [run.pk for run in health.start_all_estimations(window_days)]


@shared_task(name="allocation.tasks.predict_policy",
              bind=True, acks_late=True, soft_time_limit=120, time_limit=150)
def predict_policy(self, prediction_id: int) -> str | None:
    """Simulate one policy's candidate for a recommendation, then rank if all are in."""
    return recommendations.run_prediction(prediction_id)


@shared_task(name="allocation.tasks.expire_recommendations",
              bind=True, acks_late=True, soft_time_limit=60, time_limit=90)
def expire_recommendations(self) -> int:
    """Beat: answer analytically every recommendation whose simulations are overdue."""
    return recommendations.expire_overdue()
