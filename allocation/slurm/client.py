"""A small client for Slurm through its own commands (sinfo, squeue, sacct, scontrol,
sbatch, scancel).

Every command runs from an argument list (never a shell, so no text reaches a
shell), with a timeout, a cleaned environment and ``SLURM_CONF`` when one is
given. Whatever goes wrong becomes one :class:`SlurmError` with a one-line
message and a ``kind`` (see :data:`ERROR_KINDS`), never Slurm's multi-line
output.

Why the commands and not slurmrestd: they need nothing but the client package
and the site's ``slurm.conf`` + munge (as any login node has); slurmrestd needs a
daemon of its own, JWT keys and a non-root user (22.05 refuses root tokens by
design), and its 22.05 API (``v0.0.38``) is the same data that
``squeue --json`` / ``sinfo --json`` print. See docs/operations.md.

>>> client = SlurmClient(conf="/etc/slurm/slurm.conf",
...                      runner=lambda argv, timeout, env: Completed(0, '{"jobs": []}', ""))
>>> client.jobs()
[]
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import socket
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from allocation.slurm.conf import NODE_NAME
from allocation.slurm.parse import (
    SACCT_FIELDS,
    ParseError,
    parse_sacct,
    parse_sinfo_json,
    parse_squeue_json,
)
from allocation.slurm.records import SlurmJob, SlurmNode
from hxportal.hostlists import HostlistError, compress

DEFAULT_TIMEOUT = 30.0
#: Where a job starts unless told (sbatch would use the caller's directory).
DEFAULT_WORKDIR = "/tmp"  # noqa: S108  # nosec B108 - a job's working directory, no file of ours
#: unreachable: slurmctld does not answer; timeout: the command did not end in
#: time; missing: the command is not installed; refused: Slurm said no (bad node,
#: bad job, permission); unreadable: output we cannot parse.
ERROR_KINDS = ("unreachable", "timeout", "missing", "refused", "unreadable")
#: Environment variables that would change what a command does or prints.
_DROPPED_ENV = ("SQUEUE_", "SINFO_", "SACCT_", "SBATCH_", "SCONTROL_", "SCANCEL_", "SLURM_")
_UNREACHABLE = re.compile(r"unable to contact slurm controller|connect(ion)? (failure|refused)"
                          r"|communication connection failure|zero bytes were transmitted",
                          re.IGNORECASE)
_PREFIX = re.compile(r"^(s\w+: )?(error: )?(slurm_\w+ error: )?", re.IGNORECASE)
MAX_REASON = 200


class SlurmError(RuntimeError):
    """A Slurm command failed; ``str()`` is one line, ``kind`` one of :data:`ERROR_KINDS`."""

    def __init__(self, message: str, kind: str, command: str = "") -> None:
        super().__init__(" ".join(message.split())[:300])
        self.kind = kind
        self.command = command


@dataclass(frozen=True)
class Completed:
    """What a runner returns: exit status, stdout, stderr."""

    returncode: int
    stdout: str
    stderr: str


Runner = Callable[[Sequence[str], float, Mapping[str, str]], Completed]


def run_command(argv: Sequence[str], timeout: float, env: Mapping[str, str]) -> Completed:
    """Run ``argv`` (no shell) and wait at most ``timeout`` seconds."""
    result = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout,  # noqa: S603
                            env=dict(env), check=False, stdin=subprocess.DEVNULL,
                            errors="replace")
    return Completed(result.returncode, result.stdout, result.stderr)


def controller_address(conf: str | None) -> tuple[str, int] | None:
    """(host, port) of the first SlurmctldHost in ``conf``, or None if unreadable."""
    path = conf or os.environ.get("SLURM_CONF") or "/etc/slurm/slurm.conf"
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read(1_000_000)
    except OSError:
        return None
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.split("#", 1)[0].strip().partition("=")
        if sep and key.lower() in ("slurmctldhost", "controlmachine", "slurmctldport"):
            values.setdefault(key.lower(), value.strip())
    host = values.get("slurmctldhost") or values.get("controlmachine")
    if not host:
        return None
    name, _, addr = host.partition("(")
    port = values.get("slurmctldport", "6817").split("-", 1)[0]
    return (addr.rstrip(")") or name), int(port) if port.isdigit() else 6817


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = _PREFIX.sub("", line.strip())
        if line:
            return line[:200]
    return ""


def _text_argument(value: str, field: str, limit: int = MAX_REASON) -> str:
    if not value or not value.strip():
        raise SlurmError(f"{field} must not be empty", "refused")
    if len(value) > limit or any(not ch.isprintable() for ch in value):
        raise SlurmError(f"{field}: at most {limit} printable characters", "refused")
    return value


def _hostlist(hostnames: Iterable[str]) -> str:
    names = list(hostnames)
    if not names:
        raise SlurmError("no node named", "refused")
    bad = next((name for name in names if not NODE_NAME.match(str(name))), None)
    if bad is not None:
        raise SlurmError(f"node names: {str(bad)[:64]!r} is not a node name", "refused")
    try:
        return compress(names)
    except HostlistError as exc:
        raise SlurmError(f"node names: {exc}", "refused") from exc


class SlurmClient:
    """Slurm's commands with parsed answers.

    ``conf``: the ``slurm.conf`` to use (``SLURM_CONF``; None: the environment's
    or Slurm's default). ``timeout``: seconds per command (a client command waits
    about 9 s for an unreachable slurmctld before it gives up). ``bin_dir``:
    where the commands are (None: ``PATH``). ``runner``: replaces
    :func:`run_command` in unit tests.
    """

    def __init__(self, conf: str | None = None, *, timeout: float = DEFAULT_TIMEOUT,
                 bin_dir: str | None = None, runner: Runner | None = None) -> None:
        self.conf = conf
        self.timeout = timeout
        self.bin_dir = bin_dir
        self.runner = runner or run_command

    # ------------------------------------------------------------------ plumbing
    def _env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(_DROPPED_ENV) or k == "SLURM_CONF"}
        env["LC_ALL"] = "C"
        if self.conf:
            env["SLURM_CONF"] = self.conf
        env.update(extra or {})
        return env

    def _argv0(self, command: str) -> str:
        if self.bin_dir:
            return os.path.join(self.bin_dir, command)
        return shutil.which(command) or command

    def _unreachable(self, command: str) -> SlurmError:
        where = controller_address(self.conf)
        at = f" at {where[0]}:{where[1]}" if where else ""
        return SlurmError(f"slurmctld unreachable{at} ({command})", "unreachable", command)

    def _controller_down(self) -> bool:
        where = controller_address(self.conf)
        if where is None:
            return False
        try:
            socket.create_connection(where, timeout=2).close()
        except OSError:
            return True
        return False

    def run(self, command: str, *args: str, env: Mapping[str, str] | None = None) -> str:
        """Run one Slurm command; its stdout, or :class:`SlurmError`."""
        argv = [self._argv0(command), *args]
        try:
            done = self.runner(argv, self.timeout, self._env(env))
        except FileNotFoundError as exc:
            raise SlurmError(f"{command} not found (install the slurm-client package or "
                             "set the Slurm bin directory)", "missing", command) from exc
        except subprocess.TimeoutExpired as exc:
            raise SlurmError(f"{command} did not answer within {self.timeout:g} s",
                             "timeout", command) from exc
        except OSError as exc:
            raise SlurmError(f"{command} could not run ({type(exc).__name__})",
                             "missing", command) from exc
        if done.returncode != 0:
            if _UNREACHABLE.search(done.stderr) or _UNREACHABLE.search(done.stdout):
                raise self._unreachable(command)
            detail = _first_line(done.stderr) or _first_line(done.stdout) or (
                f"exit status {done.returncode}")
            raise SlurmError(f"{command}: {detail}", "refused", command)
        return done.stdout

    def _parsed(self, command: str, parse: Callable[[str], list], *args: str,
                env: Mapping[str, str] | None = None) -> list:
        text = self.run(command, *args, env=env)
        try:
            return parse(text)
        except ParseError as exc:
            # 22.05 prints {"errors": [...], "jobs": []} and exits 0 when slurmctld is down.
            if self._controller_down():
                raise self._unreachable(command) from exc
            raise SlurmError(str(exc), "unreadable", command) from exc

    # ------------------------------------------------------------------ reads
    def nodes(self) -> list[SlurmNode]:
        """Every node (``sinfo --json``)."""
        return self._parsed("sinfo", parse_sinfo_json, "--json")

    def jobs(self) -> list[SlurmJob]:
        """Every job slurmctld holds: pending, running, and finished ones for
        MinJobAge seconds after their end (``squeue --json``)."""
        return self._parsed("squeue", parse_squeue_json, "--json")

    def job(self, job_id: int) -> SlurmJob | None:
        """One job from :meth:`jobs` (22.05's ``squeue --json`` ignores filters)."""
        return next((j for j in self.jobs() if j.job_id == int(job_id)), None)

    def history(self, start: datetime, end: datetime | None = None) -> list[SlurmJob]:
        """Jobs of every user between ``start`` and ``end`` (UTC) from accounting
        (``sacct``; needs slurmdbd), with exact start and end times and exit codes."""
        window = ["--starttime", _utc_text(start)]
        if end is not None:
            window += ["--endtime", _utc_text(end)]
        return self._parsed(
            "sacct", parse_sacct, "--allusers", "--allocations", "--parsable2", "--noheader",
            "--format=" + ",".join(SACCT_FIELDS), *window,
            env={"SLURM_TIME_FORMAT": "%s", "TZ": "UTC"})

    def ping(self) -> None:
        """Return if slurmctld answers, else raise (kind ``unreachable``)."""
        try:
            text = self.run("scontrol", "ping")
        except SlurmError as exc:
            if exc.kind == "refused":  # "Slurmctld(primary) at ... is DOWN", exit 1
                raise self._unreachable("scontrol ping") from exc
            raise
        if "is UP" not in text:
            raise self._unreachable("scontrol ping")

    # ------------------------------------------------------------------ actions
    def drain(self, hostnames: Iterable[str], reason: str) -> None:
        """Drain nodes: running jobs finish, no new job starts there."""
        self.run("scontrol", "update", f"NodeName={_hostlist(hostnames)}", "State=DRAIN",
                 f"Reason={_text_argument(reason, 'reason')}")

    def down(self, hostnames: Iterable[str], reason: str) -> None:
        """Mark nodes down: jobs on them are killed (Slurm requeues or fails them)."""
        self.run("scontrol", "update", f"NodeName={_hostlist(hostnames)}", "State=DOWN",
                 f"Reason={_text_argument(reason, 'reason')}")

    def resume(self, hostnames: Iterable[str]) -> None:
        """Undo a drain (or a down): the nodes take jobs again. Nodes that are
        neither are left as they are (Slurm applies the resume to the others and
        answers "Invalid node state specified", which is not an error here)."""
        try:
            self.run("scontrol", "update", f"NodeName={_hostlist(hostnames)}", "State=RESUME")
        except SlurmError as exc:
            if exc.kind != "refused" or "invalid node state" not in str(exc).lower():
                raise

    def submit(self, command: Sequence[str], *, nodes: Iterable[str] | None = None,
               num_nodes: int | None = None, name: str = "hx", time_limit: int | None = None,
               switches: int | None = None, output: str = "/dev/null",
               workdir: str | None = None) -> int:
        """Submit a batch job that runs ``command`` (an argument list, quoted for
        the job's shell here); pinned to ``nodes`` (``sbatch -w``) if given. Returns
        the job id. ``time_limit`` in minutes; ``switches``: ``--switches``."""
        if not command:
            raise SlurmError("command must not be empty", "refused", "sbatch")
        args = ["--parsable", f"--job-name={_text_argument(name, 'name', 100)}",
                f"--output={output}", f"--chdir={workdir or DEFAULT_WORKDIR}"]
        if nodes is not None:
            pinned = list(nodes)
            args += [f"--nodelist={_hostlist(pinned)}", f"--nodes={num_nodes or len(pinned)}"]
        elif num_nodes:
            args.append(f"--nodes={int(num_nodes)}")
        if time_limit is not None:
            args.append(f"--time={int(time_limit)}")
        if switches is not None:
            args.append(f"--switches={int(switches)}")
        args.append("--wrap=" + shlex.join(str(part) for part in command))
        text = self.run("sbatch", *args)
        job_id = text.strip().split(";", 1)[0]
        if not job_id.isdigit():
            raise SlurmError("sbatch printed no job id", "unreadable", "sbatch")
        return int(job_id)

    def shrink(self, job_id: int, hostnames: Iterable[str]) -> None:
        """Keep only ``hostnames`` of a running job; the others go back to idle."""
        self.run("scontrol", "update", f"JobId={int(job_id)}",
                 f"NodeList={_hostlist(hostnames)}")

    def cancel(self, job_id: int) -> None:
        """Cancel a job; a job that already ended is not an error."""
        try:
            self.run("scancel", str(int(job_id)))
        except SlurmError as exc:
            if exc.kind != "refused" or "already" not in str(exc).lower():
                raise


def _utc_text(moment: datetime) -> str:
    """A datetime as sacct reads it under ``TZ=UTC``; naive datetimes are refused."""
    if moment.tzinfo is None:
        raise SlurmError("history needs timezone-aware datetimes", "refused", "sacct")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")
