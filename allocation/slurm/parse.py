"""Parsers for what Slurm 22.05's client commands print (pure: text in, records out).

* ``sinfo --json`` and ``squeue --json`` (OpenAPI ``v0.0.38``): a document with
  ``errors`` and ``nodes`` / ``jobs``. A command that could not reach slurmctld
  still exits 0 and prints an empty list with an entry in ``errors``, so a
  document with errors is never read as "no jobs": :class:`ParseError`.
* ``sacct --parsable2 --noheader`` with the fields of :data:`SACCT_FIELDS` and
  ``SLURM_TIME_FORMAT=%s`` (epoch seconds). Not ``sacct --json``: in 22.05.8 it
  reports ``exit_code`` as ``SUCCESS``/0 for a job whose script exited 3, where
  the text output says ``3:0`` (sample in ``tests/fixtures/slurm/``).

Samples of each, captured from the local cluster, live in
``tests/fixtures/slurm/`` and drive the unit tests.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from allocation.slurm.records import SlurmJob, SlurmNode
from hxportal.hostlists import HostlistError, expand

#: The fields asked of ``sacct -o``; the job name comes last because it may
#: hold the delimiter.
SACCT_FIELDS = ("JobIDRaw", "State", "NodeList", "Submit", "Start", "End", "ExitCode",
                "Partition", "NNodes", "TimelimitRaw", "User", "Reason", "JobName")
#: Largest hostlist a parser expands (protects against a corrupt document).
MAX_NODES = 1_048_576

Expand = Callable[[str], list[str]]


class ParseError(ValueError):
    """Output that is not what the command should print; one line."""


#: The node lists Slurm prints for most jobs: one name, or one prefix with a
#: bracket of ascending numbers and ranges (``hx[0004,0010-0012]``).
_ONE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\Z")
_ONE_BRACKET = re.compile(r"([A-Za-z][A-Za-z0-9_.-]*?)\[([0-9,-]+)\]\Z")
_RANGE = re.compile(r"([0-9]+)(?:-([0-9]+))?\Z")


def _simple(hostlist: str) -> tuple[str, ...] | None:
    """The names of a one-name or one-bracket node list whose numbers all have one
    width and ascend (so NodeSet's sorted order is the written order); None for
    anything else, which :func:`hxportal.hostlists.expand` reads.

    >>> _simple("hx0007"), _simple("hx[0009-0011,0020]")
    (('hx0007',), ('hx0009', 'hx0010', 'hx0011', 'hx0020'))
    >>> _simple("hx[8-10]") is None, _simple("hx[2,1]") is None  # widths, order
    (True, True)
    """
    if _ONE_NAME.match(hostlist):
        return (hostlist,)
    match = _ONE_BRACKET.match(hostlist)
    if match is None:
        return None
    prefix, body = match.groups()
    width, last, names = 0, -1, []
    for item in body.split(","):
        part = _RANGE.match(item)
        if part is None:
            return None
        low_text, high_text = part.group(1), part.group(2) or part.group(1)
        if len(low_text) != len(high_text) or (width and len(low_text) != width):
            return None
        width = len(low_text)
        low, high = int(low_text), int(high_text)
        if low <= last or high < low or len(names) + high - low >= MAX_NODES:
            return None
        names += [f"{prefix}{n:0{width}d}" for n in range(low, high + 1)]
        last = high
    return tuple(names)


def _expand(hostlist: str) -> tuple[str, ...]:
    if not hostlist or hostlist in ("None assigned", "(null)"):
        return ()
    simple = _simple(hostlist)
    if simple is not None:
        return simple
    try:
        return tuple(expand(hostlist, max_nodes=MAX_NODES))
    except HostlistError as exc:
        raise ParseError(f"unreadable node list: {exc}") from exc


def epoch(value: Any) -> datetime | None:
    """Slurm's epoch seconds to an aware UTC datetime; 0, empty or text is ``None``.

    >>> epoch(1796119370).isoformat()
    '2026-12-01T10:02:50+00:00'
    >>> epoch(0) is None, epoch("Unknown") is None
    (True, True)
    """
    try:
        seconds = int(value)
    except (TypeError, ValueError):
        return None
    return datetime.fromtimestamp(seconds, tz=UTC) if seconds > 0 else None


def wait_status(status: int) -> tuple[int, int]:
    """A wait(2) status as (exit code, signal), as ``sacct`` prints ``code:signal``.

    >>> wait_status(768), wait_status(9), wait_status(0)
    ((3, 0), (0, 9), (0, 0))
    """
    return (status >> 8) & 0xFF, status & 0x7F


def _document(text: str, key: str, command: str) -> list[Mapping[str, Any]]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ParseError(f"{command} printed no JSON document") from exc
    if not isinstance(data, dict) or not isinstance(data.get(key), list):
        raise ParseError(f"{command} printed a document without {key!r}")
    errors = data.get("errors") or []
    if errors:
        first = errors[0] if isinstance(errors[0], dict) else {}
        what = first.get("description") or first.get("error") or "an error"
        raise ParseError(f"{command} reported: {str(what)[:120]}")
    return data[key]


def node_from_json(item: Mapping[str, Any]) -> SlurmNode:
    reason_by = item.get("reason_set_by_user")
    return SlurmNode(
        name=str(item["name"]),
        state=str(item.get("state") or "unknown").lower(),
        flags=frozenset(str(f).upper() for f in item.get("state_flags") or ()),
        reason=str(item.get("reason") or ""),
        reason_set_by=str(reason_by) if reason_by else "",
        reason_changed_at=epoch(item.get("reason_changed_at")),
        partitions=tuple(str(p) for p in item.get("partitions") or ()),
    )


def parse_sinfo_json(text: str) -> list[SlurmNode]:
    """``sinfo --json``: one record per node, in Slurm's order."""
    try:
        return [node_from_json(item) for item in _document(text, "nodes", "sinfo --json")]
    except (KeyError, TypeError) as exc:
        raise ParseError(f"sinfo --json: a node without {exc}") from exc


def _limit(value: Any) -> int | None:
    try:
        minutes = int(value)
    except (TypeError, ValueError):
        return None
    # INFINITE and NO_VAL are the top of the 32-bit range.
    return minutes if 0 < minutes < 0xFFFFFFFE else None


def job_from_json(item: Mapping[str, Any]) -> SlurmJob:
    state = str(item.get("job_state") or "UNKNOWN").upper()
    finished = state not in ("PENDING", "RUNNING", "SUSPENDED", "COMPLETING", "CONFIGURING")
    started = state != "PENDING"
    code = signal = None
    if finished and item.get("exit_code") is not None:
        code, signal = wait_status(int(item["exit_code"]))
    reason = str(item.get("state_reason") or "")
    nodes = _expand(str(item.get("nodes") or "")) if started else ()
    return SlurmJob(
        job_id=int(item["job_id"]),
        name=str(item.get("name") or ""),
        user=str(item.get("user_name") or item.get("user_id") or ""),
        state=state,
        nodes=nodes,
        num_nodes=int(item.get("node_count") or 0),
        partition=str(item.get("partition") or ""),
        submit_time=epoch(item.get("submit_time")),
        # A job cancelled while pending has its cancel time as start_time and no nodes.
        start_time=epoch(item.get("start_time")) if nodes else None,
        end_time=epoch(item.get("end_time")) if finished else None,
        exit_code=code,
        exit_signal=signal,
        time_limit=_limit(item.get("time_limit")),
        reason="" if reason == "None" else reason,
        comment=str(item.get("comment") or "")[:500],
    )


def parse_squeue_json(text: str) -> list[SlurmJob]:
    """``squeue --json``: every job slurmctld still holds, finished ones for MinJobAge."""
    try:
        return [job_from_json(item) for item in _document(text, "jobs", "squeue --json")]
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, ParseError):
            raise
        raise ParseError(f"squeue --json: an unreadable job ({type(exc).__name__})") from exc


def _sacct_exit(text: str) -> tuple[int | None, int | None]:
    code, _, signal = text.partition(":")
    try:
        return int(code), int(signal or 0)
    except ValueError:
        return None, None


def _sacct_record(fields: list[str]) -> SlurmJob:
    row = dict(zip(SACCT_FIELDS, fields, strict=True))
    state = row["State"].split(" ", 1)[0].upper()  # "CANCELLED by 0"
    finished = state not in ("PENDING", "RUNNING", "SUSPENDED", "REQUEUED", "RESIZING")
    code, signal = _sacct_exit(row["ExitCode"]) if finished else (None, None)
    return SlurmJob(
        job_id=int(row["JobIDRaw"]),
        name=row["JobName"],
        user=row["User"],
        state=state,
        nodes=_expand(row["NodeList"]),
        num_nodes=int(row["NNodes"] or 0),
        partition=row["Partition"],
        submit_time=epoch(row["Submit"]),
        start_time=epoch(row["Start"]),
        end_time=epoch(row["End"]) if finished else None,
        exit_code=code,
        exit_signal=signal,
        time_limit=_limit(row["TimelimitRaw"]),
        reason="" if row["Reason"] == "None" else row["Reason"],
    )


def parse_sacct(text: str, delimiter: str = "|") -> list[SlurmJob]:
    """``sacct -X --parsable2 --noheader -o <SACCT_FIELDS>`` with epoch times, one
    record per job in order of first appearance.

    A job name holding the delimiter stays whole (the name is the last field); a
    name holding a newline continues on the next line and is joined back. A job
    that was shrunk (or grown) has a ``RESIZING`` record per earlier node set and
    one for the current; they fold into one (:func:`fold_resized`).
    """
    width = len(SACCT_FIELDS)
    rows: list[list[str]] = []
    for line in text.splitlines():
        fields = line.split(delimiter, width - 1)
        if len(fields) == width and fields[0].isdigit():
            rows.append(fields)
        elif rows and line:
            rows[-1][-1] += "\n" + line
        elif line.strip():
            raise ParseError("sacct printed a line that is not a job record")
    try:
        return fold_resized([_sacct_record(fields) for fields in rows])
    except ValueError as exc:
        if isinstance(exc, ParseError):
            raise
        raise ParseError("sacct printed an unreadable job record") from exc


def fold_resized(jobs: list[SlurmJob]) -> list[SlurmJob]:
    """One record per job id: the last record's state, nodes and end, with the
    submit and start times of the first (when the job really started)."""
    first: dict[int, SlurmJob] = {}
    last: dict[int, SlurmJob] = {}
    for job in jobs:
        first.setdefault(job.job_id, job)
        last[job.job_id] = job
    return [replace(last[job_id], submit_time=head.submit_time,
                    start_time=head.start_time or last[job_id].start_time)
            for job_id, head in first.items()]
