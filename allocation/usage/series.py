"""Busy and waiting nodes over time, binned from job intervals (pure).

A job waits from its submission until it starts (or until now, still pending) and
holds its nodes from its start until it ends (or until now, still running). Each bin
holds the *time average* over the bin, not a sample at its edge, so a ten-minute job
counts for a sixth of an hour bin and no short job falls between two samples.
Times are seconds since the epoch (floats); results are native Python numbers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: The board's time ranges: name -> (length in seconds, bin width in seconds).
RANGES: dict[str, tuple[int, int]] = {
    "day": (86_400, 900),          # 96 bins of 15 min
    "week": (7 * 86_400, 3_600),   # 168 bins of 1 h
    "month": (30 * 86_400, 6 * 3_600),  # 120 bins of 6 h
}


@dataclass(frozen=True)
class JobSpan:
    """One job as the series see it: ``start``/``end`` None while it waits/runs."""

    submit: float
    start: float | None
    end: float | None
    nodes: int


@dataclass(frozen=True)
class UsageSeries:
    """Per bin (``edges`` has one more entry than each series): mean busy nodes, mean
    waiting nodes and mean waiting jobs."""

    edges: list[float]
    busy_nodes: list[float | None]
    waiting_nodes: list[float | None]
    waiting_jobs: list[float | None]

    @property
    def centres(self) -> list[float]:
        return [(a + b) / 2 for a, b in zip(self.edges, self.edges[1:], strict=False)]

    def mean_busy(self) -> float:
        """Mean busy nodes over the bins up to now (bins are equal; the newest, partly
        elapsed one counts as a whole)."""
        seen = [v for v in self.busy_nodes if v is not None]
        return sum(seen) / len(seen) if seen else 0.0

    def peak_waiting_jobs(self) -> float:
        return max((v for v in self.waiting_jobs if v is not None), default=0.0)


def range_bins(name: str, now: float) -> list[float]:
    """Bin edges of a named range ending at ``now`` (the last edge rounded up to a bin).

    >>> edges = range_bins("day", 86_400 * 10 + 60)
    >>> len(edges), edges[-1] - edges[0], edges[-1] >= 86_400 * 10 + 60
    (97, 86400.0, True)
    """
    length, step = RANGES[name]
    end = math.ceil(now / step) * step
    count = length // step
    return [float(end - step * (count - i)) for i in range(count + 1)]


def _spread(totals: list[float], edges: Sequence[float], a: float, b: float,
            weight: float) -> None:
    """Add ``weight`` x (overlap of [a, b) with each bin) / bin width to ``totals``."""
    lo, hi = edges[0], edges[-1]
    a, b = max(a, lo), min(b, hi)
    if b <= a:
        return
    step = edges[1] - edges[0]
    first = min(int((a - lo) // step), len(totals) - 1)
    last = min(int((b - lo) // step), len(totals) - 1)
    if first == last:
        totals[first] += weight * (b - a) / step
        return
    totals[first] += weight * (edges[first + 1] - a) / step
    for i in range(first + 1, last):
        totals[i] += weight
    totals[last] += weight * (b - edges[last]) / step


def usage_series(jobs: Iterable[JobSpan], edges: Sequence[float], now: float
                 ) -> UsageSeries:
    """Time-averaged busy nodes, waiting nodes and waiting jobs per bin of ``edges``
    (equal widths). The bin holding ``now`` is averaged over its elapsed part only, so
    the newest bin does not sag; bins wholly after ``now`` are None.

    >>> s = usage_series([JobSpan(0, 1800, 5400, 4)], [0.0, 3600.0, 7200.0], now=7200)
    >>> s.busy_nodes, s.waiting_nodes, s.waiting_jobs
    ([2.0, 2.0], [2.0, 0.0], [0.5, 0.0])
    >>> usage_series([JobSpan(0, 0, None, 4)], [0.0, 3600.0, 7200.0], now=1800).busy_nodes
    [4.0, None]
    """
    edges = [float(e) for e in edges]
    if len(edges) < 2:
        raise ValueError("need at least two bin edges")
    n = len(edges) - 1
    busy, waiting_nodes, waiting_jobs = [0.0] * n, [0.0] * n, [0.0] * n
    for job in jobs:
        started = job.start if job.start is not None else now
        _spread(waiting_nodes, edges, job.submit, min(started, now), job.nodes)
        _spread(waiting_jobs, edges, job.submit, min(started, now), 1.0)
        if job.start is not None:
            ended = job.end if job.end is not None else now
            _spread(busy, edges, job.start, min(ended, now), job.nodes)
    step = edges[1] - edges[0]
    elapsed = [min(max((now - lo) / step, 0.0), 1.0) for lo in edges[:-1]]

    def averaged(values: list[float]) -> list[float | None]:
        return [round(v / f, 6) if f > 0 else None for v, f in zip(values, elapsed, strict=True)]

    return UsageSeries(edges=edges, busy_nodes=averaged(busy),
                       waiting_nodes=averaged(waiting_nodes), waiting_jobs=averaged(waiting_jobs))
