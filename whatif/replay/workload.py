"""The workload the replay reads: rigid jobs with their recorded times.

Every input format (SWF, ``sacct``, the portal's synced history, the synthetic
model) becomes the same :class:`Workload`, so the replay never knows where a
job came from. Times are seconds as in the source (SWF: from the log's start;
``sacct`` and the history: seconds since the Unix epoch, UTC).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace

__all__ = [
    "MAX_LINES",
    "MAX_LINE_CHARS",
    "Job",
    "Workload",
    "WorkloadError",
    "bounded_lines",
    "fit_to_machine",
    "from_columns",
    "to_columns",
]

#: Largest log the parsers accept: a 1,000,000-line log is read, one more line
#: is refused with a clear error before anything is replayed.
MAX_LINES = 1_000_000
#: Longest line accepted (a longer one is not a job record).
MAX_LINE_CHARS = 4096


class WorkloadError(ValueError):
    """Bad input; the message names the line and the field when there is one."""

    def __init__(self, problem: str, line: int | None = None, field_name: str | None = None
                 ) -> None:
        where = []
        if line is not None:
            where.append(f"line {line}")
        if field_name:
            where.append(f"field {field_name}")
        message = f"{', '.join(where)}: {problem}" if where else problem
        super().__init__(message)
        self.line = line
        self.field = field_name
        self.problem = problem


@dataclass(frozen=True, slots=True)
class Job:
    """One rigid job as recorded.

    ``timelimit`` is what the user asked for (the scheduler plans with it);
    ``end - start`` is the recorded run time.

    >>> Job(id=7, submit=0.0, start=10.0, end=70.0, nodes=4, timelimit=120.0).runtime
    60.0
    """

    id: int | str
    submit: float
    start: float
    end: float
    nodes: int
    timelimit: float
    name: str = ""
    comment: str = ""
    pattern: str = ""

    @property
    def runtime(self) -> float:
        return max(0.0, self.end - self.start)

    @property
    def wait(self) -> float:
        return max(0.0, self.start - self.submit)


@dataclass(frozen=True)
class Workload:
    """Jobs in submit order, what was skipped (reason -> count) and header notes."""

    jobs: tuple[Job, ...]
    skipped: dict[str, int] = field(default_factory=dict)
    header: dict[str, str] = field(default_factory=dict)
    source: str = ""

    def with_jobs(self, jobs: Iterable[Job]) -> Workload:
        return replace(self, jobs=tuple(jobs))


def bounded_lines(lines: Iterable[str], max_lines: int = MAX_LINES) -> Iterator[tuple[int, str]]:
    """Numbered lines (from 1) without their line ends; refuse a log that is too long
    or a line that is too long, naming it.

    >>> list(bounded_lines(["a\\n", "b"]))
    [(1, 'a'), (2, 'b')]
    >>> list(bounded_lines(["a", "b", "c"], max_lines=2))
    Traceback (most recent call last):
    ...
    whatif.replay.workload.WorkloadError: line 3: the log has more than 2 lines; split it
    """
    for number, raw in enumerate(lines, start=1):
        if number > max_lines:
            raise WorkloadError(f"the log has more than {max_lines:,} lines; split it", number)
        if len(raw) > MAX_LINE_CHARS:
            raise WorkloadError(f"line longer than {MAX_LINE_CHARS} characters", number)
        yield number, raw.rstrip("\r\n")


def fit_to_machine(jobs: Iterable[Job], n_nodes: int) -> tuple[list[Job], int]:
    """Jobs that fit the machine, in submit order (stable), and how many were left out.

    >>> jobs = [Job(1, 5.0, 5.0, 6.0, 2, 1.0), Job(2, 1.0, 1.0, 2.0, 9, 1.0)]
    >>> kept, left_out = fit_to_machine(jobs, 8)
    >>> [j.id for j in kept], left_out
    ([1], 1)
    """
    every = list(jobs)
    kept = [j for j in every if j.nodes <= n_nodes]
    left_out = len(every) - len(kept)
    kept.sort(key=lambda j: j.submit)
    return kept, left_out


def count_reasons(reasons: Iterable[str]) -> dict[str, int]:
    return dict(sorted(Counter(reasons).items()))


COLUMNS = ("id", "submit", "start", "end", "nodes", "timelimit", "pattern")


def to_columns(jobs: Iterable[Job]) -> dict[str, list]:
    """Jobs as JSON-ready columns (what a study stores).

    >>> cols = to_columns([Job(1, 0.0, 1.0, 2.0, 4, 9.0, pattern="uniform")])
    >>> from_columns(cols)[0] == Job(1, 0.0, 1.0, 2.0, 4, 9.0, pattern="uniform")
    True
    """
    rows = list(jobs)
    return {name: [getattr(j, name) for j in rows] for name in COLUMNS}


def from_columns(columns: dict[str, list]) -> list[Job]:
    return [Job(id=i, submit=float(s), start=float(b), end=float(e), nodes=int(n),
                timelimit=float(t), pattern=p)
            for i, s, b, e, n, t, p in zip(*(columns[name] for name in COLUMNS), strict=True)]
