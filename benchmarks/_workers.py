"""A real Celery worker for the benchmark scripts (imported from the same folder)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def start_worker(processes: int, env: dict[str, str], log: Path) -> subprocess.Popen:
    """A prefork worker of ``processes`` consuming every queue, returned once it says it
    is ready (the engine warmed), in its own session so that it stops as a whole."""
    out = log.open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "hxportal", "worker", "--loglevel=INFO",
         f"--concurrency={processes}", "--pool=prefork", "--without-gossip",
         "--without-mingle", "--without-heartbeat", "-n", f"bench-{processes}@%h"],
        cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 120
    while "ready." not in log.read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"worker did not start:\n{log.read_text()[-2000:]}")
        time.sleep(0.2)
    return proc


def stop_worker(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
