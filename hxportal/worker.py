"""Celery worker hooks of the framework: lost pool processes and worker starts.

- :class:`RunRequest` (the ``Request`` class of every tracked run's task) runs
  in the worker's main process when a pool process dies holding a run: it
  releases the run's lease before Celery requeues the message, so the next
  delivery takes the run over at once, or fails the run with ``"timeout"``
  when the hard time limit killed it.
- When a worker starts it recovers runs left by a worker killed outright, now
  and once more when every lease alive at the crash has run out (the beat
  entry repeats it every minute).
- A stopping worker asks its pool processes to hand their runs over
  (:mod:`hxportal.handover`).
"""

from __future__ import annotations

import logging

from billiard.einfo import ExceptionWithTraceback
from billiard.exceptions import TimeLimitExceeded, WorkerLostError
from celery.signals import worker_init, worker_process_init, worker_ready
from celery.worker.request import Request

from hxportal import handover
from hxportal.leases import lease_seconds, owner_name
from hxportal.recovery import release_lost
from hxportal.runs import tracked_run_models

logger = logging.getLogger(__name__)

RECOVER_TASK = "hxportal.tasks.recover_stale_runs"
_LOST = (WorkerLostError, SystemExit, KeyboardInterrupt)


class RunRequest(Request):
    """A task request that hands back its run when the pool process running it dies."""

    def on_failure(self, exc_info, send_failed_event=True, return_ok=False):
        exc = exc_info.exception
        if isinstance(exc, ExceptionWithTraceback):
            exc = exc.exc
        if isinstance(exc, (*_LOST, TimeLimitExceeded)) and self.worker_pid:
            self._release(timed_out=isinstance(exc, TimeLimitExceeded))
        return super().on_failure(exc_info, send_failed_event=send_failed_event,
                                  return_ok=return_ok)

    def _release(self, *, timed_out: bool) -> None:
        models = {m.task_name: m for m in tracked_run_models()}
        model = models.get(self.task_name)
        if model is None or not self.args:
            return
        owner = owner_name(self.worker_pid)
        try:
            done = release_lost(model, int(self.args[0]), owner, timed_out=timed_out)
        except Exception:  # the database is unreachable: the lease runs out instead
            logger.warning("could not release %s after its process died", self.id,
                           exc_info=True)
            return
        if done:
            logger.warning("%s: pool process %s died %s", self.id, owner,
                           "at the hard time limit: failed" if timed_out
                           else "while running it: released for the next delivery")


@worker_ready.connect
def recover_after_start(sender=None, **_kwargs: object) -> None:
    """Recover runs of a worker killed outright: now, and after one lease (runs it
    still held then are silent for a whole lease by that time)."""
    app = sender.app
    try:
        app.send_task(RECOVER_TASK)
        app.send_task(RECOVER_TASK, countdown=lease_seconds() + 1)
    except Exception:  # the broker went away again: beat runs the recovery later
        logger.warning("could not queue the recovery of stale runs", exc_info=True)


@worker_init.connect
def ignore_handover_until_listening(**_kwargs: object) -> None:
    handover.ignore_until_listening()


@worker_process_init.connect
def listen_for_handover(**_kwargs: object) -> None:
    handover.listen()


@worker_ready.connect
def forward_stops_to_the_pool(sender=None, **_kwargs: object) -> None:
    """Before Celery handles a stop signal, ask the pool processes to hand over."""
    pool = getattr(sender, "pool", None)
    # The prefork pool's info (what ``celery inspect stats`` shows) lists its processes.
    handover.forward_stops(lambda: list(pool.info.get("processes", [])),
                           stop_taking=lambda: take_no_more_tasks(sender))


def take_no_more_tasks(consumer: object) -> None:
    """Make a stopping worker's consumer fetch no more messages.

    A warm shutdown keeps polling the broker while it waits for the pool, so a run
    handed over came straight back to the same stopping worker, which loaded its
    checkpoint, ran a chunk and handed it over again (two or three times; each a load
    and a save, seconds on a 65,536-node machine). kombu's Redis and file transports
    fetch only while their channel's QoS ``can_consume()``, which is what Celery's own
    ``worker_disable_prefetch`` overrides; this is safe in a signal handler (no I/O).
    """
    channel = getattr(getattr(consumer, "task_consumer", None), "channel", None)
    qos = getattr(channel, "qos", None)
    if qos is not None:
        qos.can_consume = lambda: False
