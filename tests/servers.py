"""Start the project's servers as separate processes, as an operator would, and
talk to them over HTTP (the deployment tests: slow clients, make run's shutdown).
"""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def zero_setup_env(data: Path) -> dict[str, str]:
    """This environment without the test run's database, broker and settings: ``make
    run``'s defaults (SQLite and the filesystem broker), kept in ``data``."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE")}
    return {**env, "HX_DATA_DIR": str(data), "STATIC_ROOT": str(data / "static"),
            "PYTHONDONTWRITEBYTECODE": "1"}


def probe(port: int, path: str = "/login/", timeout: float = 5.0,
          headers: dict[str, str] | None = None,
          host: str = "127.0.0.1") -> tuple[int | None, float]:
    """One GET; return ``(status, seconds)``, status ``None`` when it timed out or failed."""
    start = time.monotonic()
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("GET", path, headers=headers or {})
        status = conn.getresponse().status
    except OSError:
        status = None
    finally:
        conn.close()
    return status, time.monotonic() - start


def wait_until_serving(port: int, path: str = "/login/", timeout: float = 120.0,
                       process: subprocess.Popen | None = None,
                       headers: dict[str, str] | None = None) -> None:
    """Poll until the server answers ``path``; raise with a reason when it never does."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode} before serving")
        status, _ = probe(port, path, timeout=10.0, headers=headers)
        if status is not None:
            return
        time.sleep(0.2)
    raise RuntimeError(f"nothing answered on port {port} within {timeout:.0f} s")


@contextmanager
def running(command: list[str], env: dict[str, str], log: Path, port: int,
            headers: dict[str, str] | None = None) -> Iterator[subprocess.Popen]:
    """Start a server in its own session and wait until it answers; stop it (and its
    children) when the block ends."""
    with log.open("w") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    try:
        try:
            wait_until_serving(port, process=process, headers=headers)
        except RuntimeError as exc:
            raise AssertionError(f"{exc}:\n{log.read_text()[-3000:]}") from exc
        yield process
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
