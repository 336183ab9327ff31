"""``make run`` stops promptly (issue: after SIGTERM the Celery worker hung for over
25 s). Its warm shutdown waited for the running simulation, up to the task's hour
limit, and scripts/run.sh waited for it without a bound.

The test starts scripts/run.sh as ``make run`` does (zero-setup: SQLite and the
filesystem broker in a scratch folder), makes the worker run a long simulation,
sends SIGTERM to the script and checks that every process it started is gone
within the bound, and that the simulation's message is back on the broker, so the
next start runs it again instead of losing it: the simulation saves its state and
hands itself back to the queue as the worker stops, so it is ``pending`` again.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.servers import free_port, wait_until_serving, zero_setup_env

ROOT = Path(__file__).resolve().parents[1]
# scripts/run.sh kills what is left after HX_STOP_SECONDS (15 s); a few more for that.
BOUND = 20.0
pytestmark = pytest.mark.processes
LOGS = ("worker.log", "worker-short.log", "beat.log")

ENQUEUE = """
from simulation.presets import study_configs
from simulation.services.runs import start_run
point, config = [item for item in study_configs(scale=64)
                 if item[0]["scenario"] == "interference"][-1]
print("RUN", start_run(dict(config, seed=2027)).pk)
"""


def session_processes(session: int) -> list[int]:
    """Live (not zombie) processes of ``session``, read from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == session and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def run_status(database: Path, pk: int) -> str | None:
    with sqlite3.connect(database, timeout=10) as db:
        row = db.execute("SELECT status FROM simulation_simulationrun WHERE id = ?",
                         (pk,)).fetchone()
    return row[0] if row else None


def logs_tail(data: Path, lines: int = 40) -> str:
    """The end of every log the script writes: what a failure here must show, since
    the portal's processes run outside pytest's capture."""
    parts = []
    for log in [data.parent / "run.log", *(data / name for name in LOGS)]:
        text = log.read_text(errors="replace") if log.exists() else "(no file)"
        parts.append(f"--- {log.name}\n" + "\n".join(text.splitlines()[-lines:]))
    return "\n".join(parts)


def assert_still_running(process, data: Path) -> None:
    assert process.poll() is None, (
        f"scripts/run.sh ended early (exit {process.returncode})\n{logs_tail(data)}")


def wait_for_status(database: Path, pk: int, status: str, process, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while run_status(database, pk) != status:
        assert_still_running(process, database.parent)
        assert time.monotonic() < deadline, f"run {pk} never became {status}"
        time.sleep(0.5)


def wait_for_ready_workers(data: Path, process, timeout: float) -> None:
    """Both workers of scripts/run.sh said "ready.": a stop signal that reaches a
    Celery worker still starting can be lost (the script's kill after
    HX_STOP_SECONDS is the answer to that; this test is about a running portal)."""
    deadline = time.monotonic() + timeout
    logs = [data / "worker.log", data / "worker-short.log"]
    while not all(log.exists() and " ready." in log.read_text() for log in logs):
        assert_still_running(process, data)
        assert time.monotonic() < deadline, "the workers never said they were ready"
        time.sleep(0.2)


@contextmanager
def make_run(tmp_path: Path) -> Iterator[tuple[subprocess.Popen, Path, dict[str, str]]]:
    """scripts/run.sh started as ``make run`` starts it (zero-setup, in its own
    session, output in ``run.log``) and serving; whatever of it is left at the end
    is killed."""
    data, port = tmp_path / "data", free_port()
    data.mkdir()
    env = {**zero_setup_env(data), "PORT": str(port)}
    log = (tmp_path / "run.log").open("w")
    script = subprocess.Popen(["bash", "scripts/run.sh"], cwd=ROOT, env=env, stdout=log,
                              stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_until_serving(port, timeout=300, process=script)
        yield script, data, env
    finally:
        for pid in session_processes(script.pid):
            os.kill(pid, signal.SIGKILL)
        if script.poll() is None:
            script.kill()
        script.wait(timeout=30)
        log.close()


def test_sigterm_stops_every_process_promptly_and_requeues_the_running_task(tmp_path):
    with make_run(tmp_path) as (script, data, env):
        shell = subprocess.run(
            [sys.executable, "manage.py", "shell", "-c", ENQUEUE], cwd=ROOT,
            env={**env, "DJANGO_SETTINGS_MODULE": "hxportal.settings.local"},
            capture_output=True, text=True, timeout=120, check=True)
        pk = int(shell.stdout.split("RUN")[-1])
        wait_for_status(data / "hxportal.sqlite3", pk, "running", script, timeout=300)
        wait_for_ready_workers(data, script, timeout=120)
        started = time.monotonic()
        script.send_signal(signal.SIGTERM)
        while session_processes(script.pid) and time.monotonic() - started < BOUND + 10:
            script.poll()
            time.sleep(0.1)
        seconds = time.monotonic() - started
        left = session_processes(script.pid)
    output = (tmp_path / "run.log").read_text()
    assert not left and seconds < BOUND, (seconds, left, output[-2000:])
    assert "killing" not in output, output[-2000:]  # the worker stopped by itself
    queued = [path.read_text() for path in (data / "broker" / "queue").glob("*.msg")]
    assert any(f"simulation.simulationrun:{pk}" in message for message in queued), (
        "the running simulation's message was not put back on the broker")
    # handed over (hxportal.handover): saved and queued again, not failed or left running
    assert run_status(data / "hxportal.sqlite3", pk) == "pending"


def session_process_with(session: int, word: str) -> int | None:
    """The process of ``session`` whose command line holds ``word``."""
    for pid in session_processes(session):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if word.encode() in argv:
            return pid
    return None


def test_a_process_that_dies_stops_the_rest_and_is_named(tmp_path):
    """If one of make run's processes ends (here the short worker, killed), the
    script says which one, with its status, and stops the others in the bound."""
    with make_run(tmp_path) as (script, data, _env):
        wait_for_ready_workers(data, script, timeout=120)
        short = session_process_with(script.pid, "short@%h")
        assert short is not None, "no short worker in make run's session"
        os.kill(short, signal.SIGKILL)
        code = script.wait(timeout=BOUND + 10)
        left = session_processes(script.pid)
    output = (tmp_path / "run.log").read_text()
    assert code == 128 + signal.SIGKILL, (code, output[-2000:])
    assert f"the short worker (pid {short}) ended with status {code}" in output, output[-2000:]
    assert not left, (left, output[-2000:])
