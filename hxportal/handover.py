"""A stopping worker asks its pool processes to hand their runs back to the queue.

Celery's shutdowns leave a running task alone: a warm one (SIGTERM) waits for it,
up to the task's hour-long limit, and a cold one (SIGQUIT: ``scripts/run.sh``,
compose) gives it ``HX_WORKER_SHUTDOWN_GRACE`` (3 s) and then kills it, so a long
simulation lost everything since its last periodic checkpoint (up to
``HX_SIM_CHECKPOINT_SECONDS``, 10 min) at every deploy.

So when the worker's main process gets SIGTERM, SIGQUIT or SIGINT, it first sends
:data:`HANDOVER_SIGNAL` to its pool processes and then does what Celery does. A
pool process notes it (:func:`requested`); work that can save its place (a
simulation's checkpoint hook, after the chunk of cycles it is in) saves it,
queues the run again (``hxportal.runs.continue_later``: begun runs go first) and
ends its task, so the warm shutdown ends at once and the cold one loses nothing.
Work that cannot save is left to Celery as before.

The signal is ignored from the worker's start until a pool process installs its
handler, so a process forked meanwhile is not killed by it (the default action of
a real-time signal).
"""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Callable
from types import FrameType

logger = logging.getLogger(__name__)

#: A real-time signal: nothing else sends it, and billiard's pool processes, which
#: take over SIGUSR1, SIGUSR2 and the terminating signals, leave it alone.
HANDOVER_SIGNAL: int = signal.SIGRTMIN + 2
#: The signals that stop a Celery worker (warm, cold, and Ctrl+C).
STOP_SIGNALS = (signal.SIGTERM, signal.SIGQUIT, signal.SIGINT)

_requested = False


def requested() -> bool:
    """Whether this process's worker is stopping (asked by :data:`HANDOVER_SIGNAL`)."""
    return _requested


def _note(_signum: int, _frame: FrameType | None) -> None:
    global _requested
    _requested = True


def ignore_until_listening() -> None:
    """In the worker's main process before it forks: pool processes inherit this."""
    signal.signal(HANDOVER_SIGNAL, signal.SIG_IGN)


def listen() -> None:
    """In a pool process: note the request (Python runs the handler between chunks)."""
    signal.signal(HANDOVER_SIGNAL, _note)


def forward_stops(pool_pids: Callable[[], list[int]],
                  stop_taking: Callable[[], None] = lambda: None) -> None:
    """In the worker's main process: before Celery handles a stop signal, stop taking
    messages (``stop_taking``) and ask the pool processes to hand over. Processes forked
    later inherit these handlers, so they act only in the process that installed them."""
    main = os.getpid()
    for stop in STOP_SIGNALS:
        previous = signal.getsignal(stop)
        if not callable(previous):
            continue

        def forward(signum: int, frame: FrameType | None,
                    previous: Callable[[int, FrameType | None], object] = previous) -> None:
            if os.getpid() == main:
                stop_taking()
                _ask(pool_pids, signum)
            previous(signum, frame)

        signal.signal(stop, forward)


def _ask(pool_pids: Callable[[], list[int]], signum: int) -> None:
    try:
        pids = pool_pids()
    except (AttributeError, TypeError):  # no prefork pool (solo, eager): nothing to ask
        return
    for pid in pids:
        try:
            os.kill(pid, HANDOVER_SIGNAL)
        except OSError:
            pass  # the process ended meanwhile
    if pids:
        logger.info("worker stopping (%s): asked pool processes %s to hand their runs over",
                    signal.Signals(signum).name, ", ".join(map(str, pids)))
