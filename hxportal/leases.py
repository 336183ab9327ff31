"""The lease on a running tracked run: who holds it, and the heartbeat that keeps it.

A worker killed outright (the whole worker, not one pool process) cannot
requeue its message: the broker gives it back only after the visibility
timeout, over an hour. So the process running a row writes ``heartbeat_at``
every quarter of the lease (``HX_RUN_LEASE_SECONDS``); a row silent for a
whole lease is taken over (:func:`hxportal.runs.claim`) or queued again
(:mod:`hxportal.recovery`). Each claim draws a new ``lease_token``; only its
holder may write progress or store the outcome, so two deliveries of one run
never both run it to the end.

The heartbeat runs in a thread of the pool process. The engine's compiled loop
holds the GIL, but it returns to Python between chunks that last well under a
second (each chunk reports progress), so the thread beats on time; a lease of
minutes leaves wide room for anything slower.

The thread blocks every signal, so the kernel hands a signal sent to the pool
process to its main thread only. Billiard masks SIGTERM in the main thread while
an exiting pool process writes its last message to the shared result queue; a
second SIGTERM (a cold shutdown sends two) taken by this thread instead killed
the process holding that queue's lock, and the worker then hung at exit until
``scripts/run.sh`` killed it.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

from hxportal.models import RunStatus, TrackedRun

logger = logging.getLogger(__name__)


def lease_seconds() -> float:
    return float(settings.HX_RUN_LEASE_SECONDS)


def heartbeat_interval() -> float:
    """Seconds between heartbeats: four chances to beat within one lease."""
    return max(0.5, lease_seconds() / 4)


def new_token() -> str:
    return uuid.uuid4().hex


def owner_name(pid: int | None = None) -> str:
    """Host and process id of a holder (shown to operators; matched when a pool
    process dies, see ``hxportal.worker.RunRequest``)."""
    return f"{socket.gethostname()} pid {os.getpid() if pid is None else pid}"


def last_sign_of_life(run: TrackedRun) -> datetime:
    return run.heartbeat_at or run.started_at or run.created_at


def is_held(run: TrackedRun, now: datetime | None = None) -> bool:
    """A running row whose holder beat within the lease (a live process runs it)."""
    now = now or timezone.now()
    return (run.status == RunStatus.RUNNING and bool(run.lease_token)
            and last_sign_of_life(run) >= now - timedelta(seconds=lease_seconds()))


class Heartbeat:
    """Write ``heartbeat_at`` of a held row every :func:`heartbeat_interval` seconds.

    Use as a context manager around the work. The thread opens its own database
    connection only when it first beats and closes it when it stops; a failed
    write (database restarting) is logged and tried again at the next beat.
    """

    def __init__(self, model: type[TrackedRun], pk: int, token: str) -> None:
        self.model, self.pk, self.token = model, pk, token
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"heartbeat-{model._meta.label_lower}-{pk}")

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()

    def _run(self) -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
        interval = heartbeat_interval()
        try:
            while not self._stop.wait(interval):
                try:
                    beat(self.model, self.pk, self.token)
                except Exception:  # the database may be restarting: beat again later
                    logger.warning("heartbeat of %s %s failed", self.model.__name__, self.pk,
                                   exc_info=True)
        finally:
            connection.close()  # this thread's own connection


def beat(model: type[TrackedRun], pk: int, token: str) -> bool:
    """One heartbeat; ``False`` when the row is no longer held by ``token``."""
    return bool(model.objects.filter(pk=pk, status=RunStatus.RUNNING, lease_token=token)
                .update(heartbeat_at=timezone.now()))
