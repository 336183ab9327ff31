"""A pool process's heartbeat thread never takes a signal meant for its main thread.

Billiard blocks SIGTERM in the main thread of an exiting pool process while it
writes its last message to the result queue, holding the queue's lock. A second
SIGTERM that the kernel handed to the heartbeat thread instead killed the process
with the lock held, and the worker's own exit then waited on that lock until
``scripts/run.sh`` killed it (a CI run of ``tests/test_run_shutdown.py``).

The child below reproduces that moment without billiard: SIGTERM's action is the
default (as after billiard's first handler ran), a heartbeat is running, the main
thread blocks SIGTERM and signals its own process. The signal must wait for the
main thread to unblock it, so "survived" is printed before the process dies.
A forked pool process has no other threads; BLAS's are kept out of the child too,
since the kernel could hand them the signal as well.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import os, signal, sys, time
import django
django.setup()
from hxportal.leases import Heartbeat
from simulation.models import SimulationRun

signal.signal(signal.SIGTERM, signal.SIG_DFL)
with Heartbeat(SimulationRun, 1, "token"):
    time.sleep(0.2)  # the thread is up and waiting for its first beat
    print("threads", len(os.listdir(f"/proc/{os.getpid()}/task")), flush=True)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(0.5)
    print("survived", flush=True)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    time.sleep(5)
print("the signal was lost", flush=True)
"""


def test_a_signal_to_the_process_waits_for_the_main_thread_not_the_heartbeat():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "hxportal.settings.local",
           "HX_DATA_DIR": os.environ.get("HX_DATA_DIR", str(ROOT / "data")),
           **{name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                     "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")}}
    env.pop("DATABASE_URL", None)
    done = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.stdout == "threads 2\nsurvived\n", (done.stdout, done.stderr[-2000:])
    assert done.returncode == -signal.SIGTERM, done.returncode
