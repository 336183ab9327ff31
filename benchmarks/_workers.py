"""A real Celery worker and the portal it works for, for the benchmark scripts
(imported from the same folder)."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _databases import fresh_postgres

ROOT = Path(__file__).resolve().parent.parent


def add_service_arguments(parser: argparse.ArgumentParser) -> None:
    """``--database-url`` (its server gets a scratch database) and ``--broker``."""
    parser.add_argument("--database-url",
                        default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--broker", default="redis://127.0.0.1:6379/13")


def portal_environment(args: argparse.Namespace, database: str,
                       extra: dict[str, str] | None = None) -> tuple[dict[str, str], Path]:
    """A scratch PostgreSQL database ``database`` migrated, a data folder, and the
    environment this process and its workers share, with Django set up here: where
    every worker benchmark starts. Returns the environment and the data folder."""
    url = fresh_postgres(args.database_url, database)
    data_dir = Path(tempfile.mkdtemp(prefix="hxbench-"))
    env = {**os.environ, "DATABASE_URL": url, "CELERY_BROKER_URL": args.broker,
           "DJANGO_SETTINGS_MODULE": "hxportal.settings.local", "HX_DATA_DIR": str(data_dir),
           "PYTHONUNBUFFERED": "1", **(extra or {})}
    os.environ.update(env)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env,
                   check=True)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    return env, data_dir


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
