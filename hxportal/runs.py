"""The task runner shared by every tracked run.

Enqueue after commit with the row id as the task id; claim the row in a short
transaction; run the pure work outside any transaction; store the result in
one short transaction that ignores a run already finished by another delivery.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from celery import current_app
from celery.exceptions import SoftTimeLimitExceeded
from django.apps import apps
from django.db import transaction
from django.utils import timezone

from hxportal.models import TERMINAL_RUN_STATUSES, RunStatus, TrackedRun

logger = logging.getLogger(__name__)
MAX_LOG_LINES = 500


def enqueue(run: TrackedRun) -> None:
    """Send the run's task, by its name, once the surrounding transaction commits.

    Services name the task (``task_name`` on the model) instead of importing task
    modules, which import the services: no import cycle, and the name is the
    contract with queued messages. If the broker is down the request still
    succeeds: the row stays pending with no ``sent_at`` and :func:`resend_unsent`
    sends it when the broker is back.
    """
    model, pk, task_id = type(run), run.pk, run.task_id
    transaction.on_commit(
        lambda: _send(model, pk, task_id, lambda: _publish(model.task_name, pk, task_id)),
        robust=True)


def _publish(task_name: str, pk: int, task_id: str) -> Any:
    """Publish through the registered task when this process knows it (so eager mode
    runs it in place), else by name alone (a web process without the task modules)."""
    task = current_app.tasks.get(task_name)
    if task is not None:
        return task.apply_async(args=[pk], task_id=task_id)
    return current_app.send_task(task_name, args=[pk], task_id=task_id)


def _send(model: type[TrackedRun], pk: int, task_id: str, publish: Callable[[], Any]) -> bool:
    try:
        publish()
    except Exception:  # the broker is unreachable: the sweeper retries
        logger.warning("could not send %s; it stays queued for the sweeper", task_id,
                       exc_info=True)
        return False
    model.objects.filter(pk=pk, sent_at__isnull=True).update(sent_at=timezone.now())
    return True


def tracked_run_models() -> list[type[TrackedRun]]:
    return [m for m in apps.get_models() if issubclass(m, TrackedRun) and m.task_name]


def resend_unsent(older_than_seconds: float = 30.0) -> int:
    """Send every pending run whose message never reached the broker (beat task body)."""
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    sent = 0
    for model in tracked_run_models():
        unsent = model.objects.filter(status=RunStatus.PENDING, sent_at__isnull=True,
                                      created_at__lt=cutoff).order_by("pk")
        for run in unsent.only("pk").iterator(chunk_size=500):
            task_id = run.task_id
            sent += _send(model, run.pk, task_id, lambda pk=run.pk, task_id=task_id, m=model:
                          _publish(m.task_name, pk, task_id))
    return sent


class RunReporter:
    """Progress and log lines for a running row, written at most every ``interval`` s."""

    def __init__(self, run: TrackedRun, interval: float = 0.5) -> None:
        self.run = run
        self.interval = interval
        self._last_write = 0.0
        self._pending_lines: list[str] = []

    def log(self, line: str) -> None:
        logger.info("%s: %s", self.run.task_id, line)
        stamp = timezone.now().strftime("%H:%M:%S")
        self._pending_lines.append(f"{stamp} {line}")
        self._flush(force=True)

    def progress(self, fraction: float) -> None:
        self.run.progress = min(max(float(fraction), 0.0), 1.0)
        self._flush(force=False)

    def _flush(self, force: bool) -> None:
        now = time.monotonic()
        if not force and now - self._last_write < self.interval:
            return
        self._last_write = now
        model = type(self.run)
        with transaction.atomic():
            row = model.objects.select_for_update().only("log", "status").get(pk=self.run.pk)
            if row.status != RunStatus.RUNNING:
                self._pending_lines.clear()
                return
            lines = (list(row.log) + self._pending_lines)[-MAX_LOG_LINES:]
            self._pending_lines.clear()
            model.objects.filter(pk=self.run.pk).update(progress=self.run.progress, log=lines)


def claim(model: type[TrackedRun], pk: int) -> TrackedRun | None:
    """Mark the run running; ``None`` when it is already finished (redelivery)."""
    with transaction.atomic():
        run = model.objects.select_for_update().filter(pk=pk).first()
        if run is None or run.status in TERMINAL_RUN_STATUSES:
            return None
        run.status = RunStatus.RUNNING
        run.started_at = timezone.now()
        run.attempts += 1
        run.save(update_fields=["status", "started_at", "attempts"])
        return run


def finish(model: type[TrackedRun], pk: int, *, status: str, result: Any = None,
           error: str = "", on_success: Callable[[TrackedRun], None] | None = None) -> bool:
    """Store the outcome once; a second delivery that finishes later changes nothing."""
    with transaction.atomic():
        run = model.objects.select_for_update().get(pk=pk)
        if run.status in TERMINAL_RUN_STATUSES:
            return False
        run.status = status
        run.result = result
        run.error = error[:10_000]
        run.finished_at = timezone.now()
        if status == RunStatus.SUCCEEDED:
            run.progress = 1.0
        run.save(update_fields=["status", "result", "error", "finished_at", "progress"])
        if on_success is not None and status == RunStatus.SUCCEEDED:
            on_success(run)
        return True


def execute(model: type[TrackedRun], pk: int,
            work: Callable[[TrackedRun, RunReporter], Any],
            on_success: Callable[[TrackedRun], None] | None = None) -> str | None:
    """Claim, run ``work`` outside any transaction, store its result; return the status."""
    run = claim(model, pk)
    if run is None:
        return None
    reporter = RunReporter(run)
    try:
        result = work(run, reporter)
    except SoftTimeLimitExceeded:
        finish(model, pk, status=RunStatus.FAILED, error="timeout")
        return RunStatus.FAILED
    except Exception as exc:
        logger.exception("run %s failed", run.task_id)
        finish(model, pk, status=RunStatus.FAILED, error=f"{type(exc).__name__}: {exc}")
        return RunStatus.FAILED
    finish(model, pk, status=RunStatus.SUCCEEDED, result=result, on_success=on_success)
    return RunStatus.SUCCEEDED
