"""Slurm accounting exports: ``sacct --parsable2 --allocations``.

The documented field list (ask ``sacct`` for at least these, in any order)::

    sacct --parsable2 --allocations --starttime=... --endtime=... \\
          --format=JobID,JobName,Submit,Start,End,NNodes,Timelimit,State,Comment

The first line names the fields, separated by ``|`` (``--parsable2`` puts no
``|`` at the end); ``JobID``, ``Submit``, ``Start``, ``End``, ``NNodes``,
``Timelimit`` and ``State`` are required, ``JobName`` and ``Comment`` are
optional. Times are ``YYYY-MM-DDTHH:MM:SS`` read as UTC; ``Timelimit`` is
Slurm's ``[days-]hours:minutes:seconds`` (or ``minutes``, ``minutes:seconds``,
``days-hours``, ``days-hours:minutes``). A job that never started
(``Start`` is ``Unknown``/``None``) or is still running (``End`` unknown) is
skipped and counted; so is a job with ``UNLIMITED`` or ``Partition_Limit`` as
its limit when it has no run time to stand in.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from .workload import Job, Workload, WorkloadError, bounded_lines, count_reasons

__all__ = ["SACCT_FORMAT", "SACCT_REQUIRED", "parse_sacct", "parse_timelimit"]

SACCT_REQUIRED = ("JobID", "Submit", "Start", "End", "NNodes", "Timelimit", "State")
#: The ``--format`` the docs tell operators to use.
SACCT_FORMAT = "JobID,JobName,Submit,Start,End,NNodes,Timelimit,State,Comment"
_UNKNOWN = {"", "unknown", "none", "n/a"}
_NO_LIMIT = {"unlimited", "partition_limit", "infinite"}


def parse_timelimit(text: str) -> float | None:
    """Seconds of a Slurm time limit; None for no limit.

    >>> [parse_timelimit(t) for t in ("30", "1:30", "02:00:00", "1-00:00:00", "2-3", "UNLIMITED")]
    [1800.0, 90.0, 7200.0, 86400.0, 183600.0, None]
    """
    value = text.strip()
    if value.lower() in _NO_LIMIT:
        return None
    days = 0
    if "-" in value:
        day_text, value = value.split("-", 1)
        days = int(day_text)
        parts = [int(p) for p in value.split(":")]
        while len(parts) < 3:  # days-hours, days-hours:minutes
            parts.append(0)
        hours, minutes, seconds = parts
    else:
        parts = [int(p) for p in value.split(":")]
        if len(parts) == 1:
            hours, minutes, seconds = 0, parts[0], 0
        elif len(parts) == 2:
            hours, minutes, seconds = 0, parts[0], parts[1]
        elif len(parts) == 3:
            hours, minutes, seconds = parts
        else:
            raise ValueError(text)
    if min(days, hours, minutes, seconds) < 0:
        raise ValueError(text)
    return float(((days * 24 + hours) * 60 + minutes) * 60 + seconds)


def _time(text: str, line: int, name: str) -> float | None:
    value = text.strip()
    if value.lower() in _UNKNOWN:
        return None
    try:
        return datetime.fromisoformat(value).replace(tzinfo=UTC).timestamp()
    except ValueError:
        raise WorkloadError(f"{value!r} is not a time like 2026-01-31T23:59:59",
                            line, name) from None


def _columns(header: str, line: int) -> dict[str, int]:
    names = [n.strip() for n in header.split("|")]
    missing = [n for n in SACCT_REQUIRED if n not in names]
    if missing:
        raise WorkloadError(f"the header lacks {', '.join(missing)}; export with "
                            f"--parsable2 --format={SACCT_FORMAT}", line)
    return {n: i for i, n in enumerate(names)}


def parse_sacct(lines: Iterable[str], *, max_lines: int | None = None) -> Workload:
    """Read a ``sacct --parsable2 --allocations`` export.

    Examples
    --------
    >>> text = ["JobID|JobName|Submit|Start|End|NNodes|Timelimit|State",
    ...         "11|cfd|2026-01-01T00:00:00|2026-01-01T00:01:00|2026-01-01T00:11:00|4|"
    ...         "00:30:00|COMPLETED",
    ...         "12|x|2026-01-01T00:02:00|Unknown|Unknown|2|10|CANCELLED by 0"]
    >>> w = parse_sacct(text)
    >>> j = w.jobs[0]
    >>> (j.id, j.name, j.nodes, j.end - j.start, j.timelimit, w.skipped)
    (11, 'cfd', 4, 600.0, 1800.0, {'never started': 1})
    >>> parse_sacct(text[:1] + ["13|y|2026-01-01T00:00:00|2026-01-01T00:00:00|"
    ...                         "2026-01-01T00:00:01|four|10|COMPLETED"])
    Traceback (most recent call last):
    ...
    whatif.replay.workload.WorkloadError: line 2, field NNodes: 'four' is not a whole number >= 1
    """
    columns: dict[str, int] | None = None
    jobs: list[Job] = []
    reasons: list[str] = []
    numbered = bounded_lines(lines) if max_lines is None else bounded_lines(lines, max_lines)
    for number, text in numbered:
        if not text.strip():
            continue
        if columns is None:
            columns = _columns(text, number)
            continue
        cells = text.split("|")
        if len(cells) < len(columns):
            raise WorkloadError(f"{len(cells)} fields, the header has {len(columns)} "
                                "(is a '|' missing, or one inside a name?)", number)
        job, reason = _row(cells, columns, number)
        if job is None:
            reasons.append(reason)
        else:
            jobs.append(job)
            if reason:
                reasons.append(reason)
    if columns is None:
        raise WorkloadError("empty export: expected a header line naming "
                            + ", ".join(SACCT_REQUIRED))
    jobs.sort(key=lambda j: j.submit)
    return Workload(jobs=tuple(jobs), skipped=count_reasons(reasons), source="sacct")


def _job_id(text: str) -> int | str:
    value = text.strip()
    return int(value) if value.isdigit() else value


def _check_times(submit: float | None, start: float | None, end: float | None,
                 number: int) -> str:
    """Why the row is skipped ("" when it is replayed); refuse impossible times."""
    if submit is None:
        raise WorkloadError("the submit time is missing", number, "Submit")
    if start is None:
        return "never started"
    if end is None:
        return "still running"
    if end < start or start < submit:
        raise WorkloadError("times out of order (Submit <= Start <= End expected)", number,
                            "End" if end < start else "Start")
    return ""


def _row(cells: list[str], columns: dict[str, int], number: int) -> tuple[Job | None, str]:
    def cell(name: str) -> str:
        i = columns.get(name)
        return cells[i].strip() if i is not None else ""

    job_id = cell("JobID")
    if not job_id:
        raise WorkloadError("empty job id", number, "JobID")
    if "." in job_id:
        return None, "a job step (export with --allocations)"
    submit = _time(cell("Submit"), number, "Submit")
    start = _time(cell("Start"), number, "Start")
    end = _time(cell("End"), number, "End")
    nodes_text = cell("NNodes")
    if not nodes_text.isdigit() or int(nodes_text) < 1:
        raise WorkloadError(f"{nodes_text!r} is not a whole number >= 1", number, "NNodes")
    skip = _check_times(submit, start, end, number)
    if skip:
        return None, skip
    try:
        limit = parse_timelimit(cell("Timelimit"))
    except ValueError:
        raise WorkloadError(f"{cell('Timelimit')!r} is not a Slurm time limit",
                            number, "Timelimit") from None
    note = ""
    if limit is None or limit < end - start:
        note = ("no time limit: the run time is used" if limit is None
                else "time limit below the run time: raised to it")
        limit = end - start
    assert submit is not None and start is not None and end is not None
    return Job(id=_job_id(job_id), submit=submit, start=start, end=end,
               nodes=int(nodes_text), timelimit=limit, name=cell("JobName"),
               comment=cell("Comment")), note
