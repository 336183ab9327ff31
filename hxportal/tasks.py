"""Framework maintenance tasks (scheduled by django-celery-beat)."""

from __future__ import annotations

from celery import shared_task

from hxportal import recovery, runs


@shared_task(name="hxportal.tasks.resend_unsent_runs",
             bind=True, acks_late=True, soft_time_limit=120, time_limit=150)
def resend_unsent_runs(self) -> int:
    """Send runs whose message never reached the broker (it was down at submission)."""
    return runs.resend_unsent()


@shared_task(name="hxportal.tasks.recover_stale_runs",
             bind=True, acks_late=True, soft_time_limit=120, time_limit=150)
def recover_stale_runs(self) -> int:
    """Queue again (or fail) runs whose worker was killed outright (no heartbeat)."""
    return recovery.recover_stale()
