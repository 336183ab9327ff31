"""Thin Celery tasks of recommendations: ids in, one service call.

The names are the ones these tasks had before the recommendations app was
split out of allocation: queued messages and beat rows carry them.
"""

from __future__ import annotations

from celery import shared_task

from hxportal.runs import RUN_TASK_REQUEST
from recommendations import services
from recommendations.constants import (
    CALIBRATE_MACHINES_TASK,
    EXPIRE_RECOMMENDATIONS_TASK,
    PREDICT_POLICY_TASK,
    PREPARE_CALIBRATION_TASK,
    REFRESH_CALIBRATIONS_TASK,
)


@shared_task(name=PREDICT_POLICY_TASK, Request=RUN_TASK_REQUEST,
             bind=True, acks_late=True, soft_time_limit=120, time_limit=150)
def predict_policy(self, prediction_id: int) -> str | None:
    """Simulate one policy's candidate for a recommendation, then rank if all are in."""
    return services.run_prediction(prediction_id)


@shared_task(name=EXPIRE_RECOMMENDATIONS_TASK,
             bind=True, acks_late=True, soft_time_limit=60, time_limit=90)
def expire_recommendations(self) -> int:
    """Beat: answer analytically every recommendation whose simulations are overdue."""
    return services.expire_overdue()


@shared_task(name=CALIBRATE_MACHINES_TASK, bind=True, acks_late=True, soft_time_limit=300,
             time_limit=360)
def calibrate_machines(self) -> int:
    """Beat: start a calibration for every machine shape without one on this engine."""
    return len(services.start_missing_calibrations())


@shared_task(name=REFRESH_CALIBRATIONS_TASK, bind=True, acks_late=True, soft_time_limit=300,
             time_limit=360)
def refresh_calibrations(self) -> int:
    """Beat: rebuild running calibrations' tables from their finished runs."""
    return services.refresh_running_calibrations()


@shared_task(name=PREPARE_CALIBRATION_TASK, bind=True, acks_late=True, soft_time_limit=900,
             time_limit=960)
def prepare_calibration(self, calibration_id: int) -> int:
    """Create a calibration's runs (its sweep) and queue them; once only."""
    calibration = services.prepare_calibration(calibration_id)
    return calibration.run_count if calibration is not None else 0
