"""Start a real Celery worker process against the test database and broker.

The worker inherits the broker settings of the test run (Redis in the
PostgreSQL pass, the filesystem broker in the zero-setup pass) and is pointed at
the test database, so tests using it need ``django_db(transaction=True)``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[1]


def current_database_url() -> str:
    """A DATABASE_URL naming the database the tests are using right now."""
    cfg = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{cfg['NAME']}"
    user = cfg.get("USER") or "postgres"
    password = f":{cfg['PASSWORD']}" if cfg.get("PASSWORD") else ""
    host = cfg.get("HOST") or "127.0.0.1"
    port = cfg.get("PORT") or 5432
    return f"postgres://{user}{password}@{host}:{port}/{cfg['NAME']}"


def purge_broker() -> None:
    """Drop messages left by earlier runs so the worker sees only this test's tasks."""
    from hxportal.celery import app

    app.control.purge()


@contextmanager
def celery_worker(log_path: Path, concurrency: int = 1,
                  extra_env: dict[str, str] | None = None,
                  ready_timeout: float = 90.0, queues: tuple[str, ...] | None = None,
                  name: str = "test") -> Iterator[subprocess.Popen]:
    """Run ``celery -A hxportal worker`` until the block ends; yield the process.

    It consumes every queue (``settings.HX_QUEUES``), as the main worker of
    scripts/run.sh does, unless ``queues`` names some.
    """
    env = {**os.environ, "DATABASE_URL": current_database_url(),
           "DJANGO_SETTINGS_MODULE": "hxportal.settings.test",
           "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
           "PYTHONUNBUFFERED": "1", **(extra_env or {})}
    log = log_path.open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "hxportal", "worker", "--loglevel=INFO",
         f"--concurrency={concurrency}", "--pool=prefork", "--without-gossip",
         "--without-mingle", "--without-heartbeat", "-n", f"{name}-{os.getpid()}@%h",
         "-Q", ",".join(queues or settings.HX_QUEUES)],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + ready_timeout
        while "ready." not in log_path.read_text():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"worker did not start:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.2)
        yield process
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        log.close()


def wait_for(predicate, timeout: float = 60.0, interval: float = 0.2):
    """Poll ``predicate`` until it returns something truthy; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout} s")


def pool_children(pid: int) -> list[int]:
    """Process ids of the worker's pool processes (children of its main process)."""
    out = subprocess.run(["ps", "--ppid", str(pid), "-o", "pid="], capture_output=True,
                         text=True, check=False).stdout
    return [int(p) for p in out.split()]
