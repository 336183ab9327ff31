"""The Standard Workload Format of the Parallel Workloads Archive.

One job per line, 18 whitespace-separated fields, ``-1`` where a value is
missing; lines starting with ``;`` are comments, and header comments of the
form ``; Name: value`` (``MaxNodes``, ``MaxProcs``, ``UnixStartTime``,
``TimeZoneString`` ...) describe the log. The fields used here:

====  ==========================  =========================================
 1    job number                  the job's ``id``
 2    submit time (s)             ``submit``
 3    wait time (s)               ``start = submit + wait``
 4    run time (s)                ``end = start + run``
 5    allocated processors        ``nodes`` when field 8 is missing
 8    requested processors        ``nodes``
 9    requested time (s)          ``timelimit`` (the run time when missing)
11    status                      5 = cancelled
14    executable number           ``name`` (``exe<k>``)
15    queue number                ``comment`` (``queue <k>``)
====  ==========================  =========================================

A job without a run time, wait time or size cannot be replayed: it is skipped
and counted by reason. A requested time shorter than the recorded run time is
raised to the run time (the job did run that long) and counted.
"""

from __future__ import annotations

from collections.abc import Iterable

from .workload import Job, Workload, WorkloadError, bounded_lines, count_reasons

__all__ = ["SWF_FIELDS", "parse_swf"]

SWF_FIELDS = (
    "job_number", "submit_time", "wait_time", "run_time", "allocated_processors",
    "average_cpu_time", "used_memory", "requested_processors", "requested_time",
    "requested_memory", "status", "user_id", "group_id", "executable_number",
    "queue_number", "partition_number", "preceding_job_number", "think_time",
)


def _number(text: str, line: int, index: int) -> float:
    try:
        value = float(text)
    except ValueError:
        raise WorkloadError(f"{text!r} is not a number", line,
                            f"{index + 1} ({SWF_FIELDS[index]})") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise WorkloadError(f"{text!r} is not a finite number", line,
                            f"{index + 1} ({SWF_FIELDS[index]})")
    return value


def _header(text: str, header: dict[str, str]) -> None:
    body = text[1:].strip()
    name, sep, value = body.partition(":")
    if sep and name and " " not in name.strip():
        header[name.strip()] = value.strip()


def parse_swf(lines: Iterable[str], *, max_lines: int | None = None) -> Workload:
    """Read an SWF log (an iterable of lines, e.g. an open text file).

    Examples
    --------
    >>> log = ["; MaxNodes: 8", "1 0 5 60 4 -1 -1 -1 120 -1 1 -1 -1 -1 -1 -1 -1 -1",
    ...        "2 10 -1 -1 2 -1 -1 2 60 -1 5 -1 -1 -1 -1 -1 -1 -1"]
    >>> w = parse_swf(log)
    >>> [(j.id, j.submit, j.start, j.end, j.nodes, j.timelimit) for j in w.jobs]
    [(1, 0.0, 5.0, 65.0, 4, 120.0)]
    >>> w.skipped, w.header
    ({'cancelled before it started': 1}, {'MaxNodes': '8'})
    >>> parse_swf(["1 0 5 sixty 4 -1 -1 -1 120 -1 1 -1 -1 -1 -1 -1 -1 -1"])
    Traceback (most recent call last):
    ...
    whatif.replay.workload.WorkloadError: line 1, field 4 (run_time): 'sixty' is not a number
    """
    header: dict[str, str] = {}
    jobs: list[Job] = []
    reasons: list[str] = []
    numbered = bounded_lines(lines) if max_lines is None else bounded_lines(lines, max_lines)
    for number, text in numbered:
        stripped = text.strip()
        if not stripped:
            continue
        if stripped.startswith(";"):
            _header(stripped, header)
            continue
        parts = stripped.split()
        if len(parts) != len(SWF_FIELDS):
            raise WorkloadError(f"{len(parts)} fields, SWF has {len(SWF_FIELDS)}", number)
        job, reason = _job(parts, number)
        if job is None:
            reasons.append(reason)
        else:
            jobs.append(job)
            if reason:
                reasons.append(reason)
    jobs.sort(key=lambda j: j.submit)
    return Workload(jobs=tuple(jobs), skipped=count_reasons(reasons), header=header,
                    source="swf")


def _job(parts: list[str], number: int) -> tuple[Job | None, str]:
    values = [_number(p, number, i) for i, p in enumerate(parts[:15])]
    job_id, submit, wait, run, allocated = values[:5]
    requested, req_time, status = values[7], values[8], values[10]
    if job_id < 0 or job_id != int(job_id):
        raise WorkloadError(f"{parts[0]!r} is not a job number", number, "1 (job_number)")
    if submit < 0:
        raise WorkloadError("the submit time is missing", number, "2 (submit_time)")
    nodes = requested if requested > 0 else allocated
    if run < 0 or wait < 0:
        return None, ("cancelled before it started" if status == 5
                      else "no run or wait time")
    if nodes <= 0:
        return None, "no size (fields 5 and 8 missing)"
    if nodes != int(nodes):
        raise WorkloadError(f"{nodes} processors is not a whole number", number,
                            "8 (requested_processors)" if requested > 0
                            else "5 (allocated_processors)")
    start = submit + wait
    note = ""
    limit = req_time
    if limit < 0:
        limit = run
        note = "no requested time: the run time is used"
    elif limit < run:
        limit = run
        note = "requested time below the run time: raised to it"
    exe, queue = values[13], values[14]
    return Job(id=int(job_id), submit=submit, start=start, end=start + run, nodes=int(nodes),
               timelimit=limit, name=f"exe{int(exe)}" if exe >= 0 else "",
               comment=f"queue {int(queue)}" if queue >= 0 else ""), note
