"""Framework maintenance tasks (scheduled by django-celery-beat)."""

from __future__ import annotations

from celery import shared_task

from hxportal import runs


@shared_task(name="hxportal.tasks.resend_unsent_runs",
             bind=True, acks_late=True, soft_time_limit=120, time_limit=150)
def resend_unsent_runs(self) -> int:
    """Send runs whose message never reached the broker (it was down at submission)."""
    return runs.resend_unsent()
