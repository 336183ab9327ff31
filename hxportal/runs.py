"""The task runner shared by every tracked run.

Enqueue after commit with the row id as the task id; claim the row in a short
transaction, taking its lease (:mod:`hxportal.leases`); run the pure work
outside any transaction while a heartbeat keeps the lease; store the result in
one short transaction that only the lease's holder may write, so a run already
finished, or taken over after its worker went silent, is never stored twice.
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
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from hxportal.leases import Heartbeat, is_held, last_sign_of_life, new_token, owner_name
from hxportal.models import TERMINAL_RUN_STATUSES, RunStatus, TrackedRun

logger = logging.getLogger(__name__)
MAX_LOG_LINES = 500
#: The ``Request`` option of every tracked run's task: its worker hands the run
#: back when the pool process running it dies (``hxportal.worker.RunRequest``).
RUN_TASK_REQUEST = "hxportal.worker:RunRequest"
#: Message priorities (Redis and the zero-setup broker take 0 first). A run that
#: has begun (continued from a checkpoint, or queued again after its worker was
#: lost) goes before runs that have not, so a long run's slices keep its place in
#: line instead of waiting behind everything queued since it started. Tasks that
#: are not runs (beat's housekeeping, all short) carry no priority: 0; so do rows
#: whose model does not wait (``waits_behind_begun_runs``: predictions).
BEGUN_RUN_PRIORITY = 0
NEW_RUN_PRIORITY = 6


def run_priority(run: TrackedRun) -> int:
    """The priority of the run's next message: begun runs first."""
    if run.started_at or not run.waits_behind_begun_runs:
        return BEGUN_RUN_PRIORITY
    return NEW_RUN_PRIORITY


def enqueue(run: TrackedRun) -> None:
    """Send the run's task, by its name, once the surrounding transaction commits.

    Services name the task (``task_name`` on the model) instead of importing task
    modules, which import the services: no import cycle, and the name is the
    contract with queued messages. If the broker is down the request still
    succeeds: the row stays pending with no ``sent_at`` and :func:`resend_unsent`
    sends it when the broker is back.
    """
    model, pk, task_id, priority = type(run), run.pk, run.task_id, run_priority(run)
    transaction.on_commit(
        lambda: _send(model, pk, task_id,
                      lambda: _publish(model.task_name, pk, task_id, priority)),
        robust=True)


def _publish(task_name: str, pk: int, task_id: str, priority: int) -> Any:
    """Publish through the registered task when this process knows it (so eager mode
    runs it in place), else by name alone (a web process without the task modules)."""
    task = current_app.tasks.get(task_name)
    if task is not None:
        return task.apply_async(args=[pk], task_id=task_id, priority=priority)
    return current_app.send_task(task_name, args=[pk], task_id=task_id, priority=priority)


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
        for run in unsent.only("pk", "started_at").iterator(chunk_size=500):
            task_id, priority = run.task_id, run_priority(run)
            sent += _send(model, run.pk, task_id,
                          lambda pk=run.pk, task_id=task_id, m=model, priority=priority:
                          _publish(m.task_name, pk, task_id, priority))
    return sent


class RunLost(Exception):
    """The row is no longer this claim's: cancelled, or taken over after a lost lease."""


class RunContinues(Exception):
    """Raised by a run's work that saved where it stands and continues in a new task
    (before the task's time limit); the message is the log line saying so."""


def stamped(line: str) -> str:
    """A log line as runs store it (``HH:MM:SS text``)."""
    return f"{timezone.now():%H:%M:%S} {line}"


def append_log(run: TrackedRun, line: str) -> None:
    """Add a stamped line to the row's stored log (the caller saves ``log``)."""
    run.log = [*run.log, stamped(line)][-MAX_LOG_LINES:]


class RunReporter:
    """Progress and log lines for a running row, written at most every ``interval`` s.

    Each write also renews the lease's heartbeat, and raises :class:`RunLost`
    when the row is no longer held by this claim, which stops work nobody wants.
    """

    def __init__(self, run: TrackedRun, interval: float = 0.5) -> None:
        self.run = run
        self.interval = interval
        self._last_write = 0.0
        self._pending_lines: list[str] = []

    def log(self, line: str) -> None:
        logger.info("%s: %s", self.run.task_id, line)
        self._pending_lines.append(stamped(line))
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
            row = model.objects.select_for_update().only(
                "log", "status", "lease_token").get(pk=self.run.pk)
            if row.status != RunStatus.RUNNING or row.lease_token != self.run.lease_token:
                self._pending_lines.clear()
                raise RunLost(f"{self.run.task_id} is {row.status}"
                              + (" under another claim" if row.status == RunStatus.RUNNING
                                 else ""))
            lines = (list(row.log) + self._pending_lines)[-MAX_LOG_LINES:]
            self._pending_lines.clear()
            model.objects.filter(pk=self.run.pk).update(
                progress=self.run.progress, log=lines, heartbeat_at=timezone.now())


def max_attempts() -> int:
    return int(settings.HX_RUN_MAX_ATTEMPTS)


def give_up(run: TrackedRun) -> None:
    """Fail a running row whose worker was lost on every attempt (inside the caller's
    transaction, the row locked)."""
    seen = timezone.localtime(last_sign_of_life(run))
    run.status = RunStatus.FAILED
    run.error = (f"the worker running it was lost on each of {run.attempts} attempts (last: "
                 f"{run.lease_owner or 'unknown process'}, silent since {seen:%H:%M:%S}); "
                 f"not run again (HX_RUN_MAX_ATTEMPTS={max_attempts()})")
    run.finished_at = timezone.now()
    run.lease_token = ""
    append_log(run, run.error)
    run.save(update_fields=["status", "error", "finished_at", "lease_token", "log"])


def claim(model: type[TrackedRun], pk: int) -> TrackedRun | None:
    """Take the row's lease and mark it running.

    ``None`` when there is nothing to do here: the row is finished (a redelivered
    message), a live process holds it (a duplicate message), or its worker was
    lost on every allowed attempt (the row is failed with that reason). A running
    row whose holder stopped beating is taken over.
    """
    with transaction.atomic():
        run = model.objects.select_for_update().filter(pk=pk).first()
        if run is None or run.status in TERMINAL_RUN_STATUSES:
            return None
        if is_held(run):
            logger.info("%s is held by %s: this delivery leaves it", run.task_id,
                        run.lease_owner)
            return None
        if run.status == RunStatus.RUNNING:  # its last holder was lost
            if run.attempts >= max_attempts():
                give_up(run)
                return None
            seen = timezone.localtime(last_sign_of_life(run))
            append_log(run, f"attempt {run.attempts} lost its worker ("
                            f"{run.lease_owner or 'unknown process'}, silent since "
                            f"{seen:%H:%M:%S}); taken over")
        now = timezone.now()
        run.status = RunStatus.RUNNING
        if not (run.continued and run.started_at):  # a continuation keeps its first start
            run.started_at = now
        run.heartbeat_at = now
        run.attempts += 1
        run.lease_token = new_token()
        run.lease_owner = owner_name()
        run.save(update_fields=["status", "started_at", "heartbeat_at", "attempts",
                                "lease_token", "lease_owner", "log"])
        return run


def finish(model: type[TrackedRun], pk: int, *, status: str, result: Any = None,
           error: str = "", on_success: Callable[[TrackedRun], None] | None = None,
           token: str | None = None) -> bool:
    """Store the outcome once; a second delivery that finishes later changes nothing,
    nor does a claim (``token``) whose row was taken over in the meantime."""
    with transaction.atomic():
        run = model.objects.select_for_update().get(pk=pk)
        if run.status in TERMINAL_RUN_STATUSES:
            return False
        if token is not None and run.lease_token != token:
            logger.warning("%s was taken over by %s: this outcome is not stored",
                           run.task_id, run.lease_owner)
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
    """Claim, run ``work`` outside any transaction with a heartbeat, store its result;
    return the stored status (``None`` when this delivery stored nothing)."""
    run = claim(model, pk)
    if run is None:
        return None
    token = run.lease_token
    with Heartbeat(model, pk, token):
        try:
            result = work(run, RunReporter(run))
        except RunLost as lost:
            logger.info("stopped: %s", lost)
            return None
        except RunContinues as more:
            return RunStatus.PENDING if continue_later(model, pk, token, str(more)) else None
        except SoftTimeLimitExceeded:
            status, outcome = RunStatus.FAILED, {"error": "timeout"}
        except Exception as exc:
            logger.exception("run %s failed", run.task_id)
            status, outcome = RunStatus.FAILED, {"error": f"{type(exc).__name__}: {exc}"}
        else:
            status, outcome = RunStatus.SUCCEEDED, {"result": result, "on_success": on_success}
    stored = finish(model, pk, status=status, token=token, **outcome)
    return status if stored else None


def continue_later(model: type[TrackedRun], pk: int, token: str, line: str) -> bool:
    """Queue the held row again for its next slice of work; ``False`` when the row is no
    longer this claim's (cancelled meanwhile: nothing is queued).

    A continuation is not a lost attempt: ``attempts`` goes back by the claim it took,
    so ``HX_RUN_MAX_ATTEMPTS`` still counts lost workers, over every slice."""
    with transaction.atomic():
        run = model.objects.select_for_update().get(pk=pk)
        if run.status != RunStatus.RUNNING or run.lease_token != token:
            return False
        run.status = RunStatus.PENDING
        run.lease_token = run.lease_owner = ""
        run.sent_at = None
        run.attempts = max(run.attempts - 1, 0)
        run.continued += 1
        append_log(run, line)
        run.save(update_fields=["status", "lease_token", "lease_owner", "sent_at", "attempts",
                                "continued", "log"])
        enqueue(run)
    return True
