"""Thin Celery task of the metrics app (beat, on the maintenance queue)."""

from __future__ import annotations

from celery import shared_task

from metrics import services
from metrics.constants import REFRESH_SNAPSHOTS_TASK


@shared_task(name=REFRESH_SNAPSHOTS_TASK, bind=True, acks_late=True, soft_time_limit=300,
             time_limit=360)
def refresh_health_snapshots(self) -> int:
    """Recompute every machine's drain candidates for ``/metrics``."""
    return services.refresh_health_snapshots()
