"""The host's processes and ports, as the local Slurm cluster sees them.

A process belongs to a cluster when its environment carries
``HX_SLURM_CLUSTER=<state dir>`` (every daemon is started with it) or when it
descends from such a process (job steps, the jobs' own processes), so stopping
a cluster never touches anything else, even with a stale pid file.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import time
from collections.abc import Iterable

MARKER = "HX_SLURM_CLUSTER"


def read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return b""


def proc_stat(pid: int) -> tuple[str, int] | None:
    """(state letter, parent pid) of a process, None if it is gone."""
    raw = read_bytes(f"/proc/{pid}/stat").decode(errors="replace")
    tail = raw.rpartition(")")[2].split()
    return (tail[0], int(tail[1])) if len(tail) > 1 else None


def alive(pid: int) -> bool:
    stat = proc_stat(pid)
    return stat is not None and stat[0] not in ("Z", "X")


def comm(pid: int) -> str:
    return read_bytes(f"/proc/{pid}/comm").decode(errors="replace").strip()


def all_pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def marked_processes(state_dir: str) -> list[int]:
    """Processes started for ``state_dir`` (the marker in their environment) and all
    their descendants (job steps, the jobs' own processes), alive, sorted."""
    marker = f"{MARKER}={state_dir}".encode()
    me = os.getpid()
    parents: dict[int, int] = {}
    roots = set()
    for pid in all_pids():
        stat = proc_stat(pid)
        if stat is None or stat[0] in ("Z", "X") or pid == me:
            continue
        parents[pid] = stat[1]
        if marker in read_bytes(f"/proc/{pid}/environ").split(b"\0"):
            roots.add(pid)
    found = set(roots)
    changed = True
    while changed:
        extra = {pid for pid, parent in parents.items() if parent in found} - found
        found |= extra
        changed = bool(extra)
    return sorted(found)


def signal_all(pids: Iterable[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def wait_gone(pids: Iterable[int], deadline: float) -> list[int]:
    left = [p for p in pids if alive(p)]
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = [p for p in left if alive(p)]
    return left


def port_busy(port: int) -> bool:
    """Whether a daemon could not bind ``port`` on every address now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            # A probe of the address slurmd binds, closed at once.
            sock.bind(("0.0.0.0", port))  # noqa: S104  # nosec B104
        except OSError:
            return True
    return False


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
    except OSError:
        return False
    return True


def last_error(log_file: str) -> str:
    """The last line of a daemon log that says error/fatal, shortened (or '')."""
    lines = read_bytes(log_file).decode(errors="replace").splitlines()[-200:]
    for line in reversed(lines):
        if re.search(r"error|fatal", line, re.IGNORECASE):
            return re.sub(r"^\[[^\]]*\]\s*", "", line.strip())[:200]
    return ""
