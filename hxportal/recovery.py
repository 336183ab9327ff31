"""Runs whose worker was lost: queue them again, or fail them with the reason.

A pool process that dies is noticed by its worker, which releases the lease
(:class:`hxportal.worker.RunRequest`) before Celery requeues the message, so
the next delivery takes the run over at once. A worker killed outright leaves
its runs ``running`` with a heartbeat that stops; :func:`recover_stale` (beat,
every minute, and at every worker start) finds rows silent for a whole lease
and queues them again, up to ``HX_RUN_MAX_ATTEMPTS`` claims, or cancels them
when their result can no longer be used (``TrackedRun.still_wanted``).

Queuing again never runs a row twice: the claim takes the row only when no
live process holds its lease, and only the latest claim may store the outcome.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from hxportal.leases import is_held, last_sign_of_life, lease_seconds
from hxportal.models import RunStatus, TrackedRun
from hxportal.runs import append_log, enqueue, finish, give_up, max_attempts, tracked_run_models

logger = logging.getLogger(__name__)


def recover_stale() -> int:
    """Queue again (or fail, or cancel) every running row silent for a whole lease;
    returns how many rows it changed (beat task body)."""
    cutoff = timezone.now() - timedelta(seconds=lease_seconds())
    silent = (Q(heartbeat_at__lt=cutoff)
              | Q(heartbeat_at__isnull=True, started_at__lt=cutoff)
              | Q(heartbeat_at__isnull=True, started_at__isnull=True, created_at__lt=cutoff))
    changed = 0
    for model in tracked_run_models():
        stale = model.objects.filter(silent, status=RunStatus.RUNNING).order_by("pk")
        for pk in stale.values_list("pk", flat=True):
            changed += _recover(model, pk)
    return changed


def _recover(model: type[TrackedRun], pk: int) -> bool:
    with transaction.atomic():
        run = model.objects.select_for_update().filter(pk=pk).first()
        if run is None or run.status != RunStatus.RUNNING or is_held(run):
            return False  # finished or taken over since the query
        seen = timezone.localtime(last_sign_of_life(run))
        where = run.lease_owner or "unknown process"
        if not run.still_wanted():
            run.status = RunStatus.CANCELLED
            run.error = (f"its worker was lost ({where}, silent since {seen:%H:%M:%S}) "
                         f"and its result is no longer needed")
            run.finished_at = timezone.now()
            run.lease_token = ""
            append_log(run, run.error)
            run.save(update_fields=["status", "error", "finished_at", "lease_token", "log"])
        elif run.attempts >= max_attempts():
            give_up(run)
        else:
            run.status = RunStatus.PENDING
            run.progress = 0.0
            run.sent_at = None  # the sweeper re-sends it if the broker is down now
            run.lease_token = ""
            append_log(run, f"attempt {run.attempts} lost its worker ({where}, silent since "
                            f"{seen:%H:%M:%S}); queued again")
            run.save(update_fields=["status", "progress", "sent_at", "lease_token", "log"])
            enqueue(run)
        logger.warning("%s: %s", run.task_id, run.log[-1] if run.log else run.status)
        return True


def release_lost(model: type[TrackedRun], pk: int, owner: str, *, timed_out: bool) -> bool:
    """The pool process ``owner`` died while holding the row (its worker noticed).

    Killed by the hard time limit: the run failed with ``"timeout"`` (running it
    again would hit the same limit). Otherwise the lease is released so the
    requeued message takes the row over at once instead of after a lease.
    """
    if timed_out:
        row = model.objects.filter(pk=pk, status=RunStatus.RUNNING, lease_owner=owner).only(
            "lease_token").first()
        return row is not None and finish(model, pk, status=RunStatus.FAILED,
                                          error="timeout", token=row.lease_token)
    return bool(model.objects.filter(pk=pk, status=RunStatus.RUNNING, lease_owner=owner)
                .update(lease_token=""))
