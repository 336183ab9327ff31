"""The outputs of a scenario: the summary the contract names, the job list,
the figures behind the charts, and intervals over seeds."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.stats import t as student_t

from .engine import ReplayResult
from .workload import Job

__all__ = ["BOUNDED_SLOWDOWN_TAU", "SUMMARY_KEYS", "interval", "job_rows", "summarise",
           "wait_cdf"]

#: Run times below this many seconds count as this long in the bounded slowdown.
BOUNDED_SLOWDOWN_TAU = 10.0
#: The summary keys of the contract, in order. ``BETTER`` says which way is better:
#: for one log the jobs are the same, so fewer useful node-hours means their
#: placements slowed them less.
SUMMARY_KEYS = ("utilisation", "mean_wait_s", "p95_wait_s", "mean_bounded_slowdown",
                "node_hours_useful", "node_hours_spares", "node_hours_lost_slow",
                "locality_share")
BETTER = {"utilisation": "max", "mean_wait_s": "min", "p95_wait_s": "min",
          "mean_bounded_slowdown": "min", "node_hours_useful": "min",
          "node_hours_spares": "min", "node_hours_lost_slow": "min",
          "locality_share": "max", "makespan_s": "min"}


def _native(value: float) -> float:
    return float(value) if math.isfinite(value) else 0.0


def summarise(result: ReplayResult, jobs: Sequence[Job]) -> dict[str, float]:
    """The contract's summary of one replay.

    ``utilisation``: node-seconds held by jobs (spares included) over the
    machine's node-seconds from the first submit to the last end. Waits are
    start minus submit. The bounded slowdown is
    ``max(1, (wait + run) / max(run, 10 s))`` with the replayed run time.
    ``locality_share``: among jobs with at least one switch's worth of nodes
    (smaller ones cannot have it), the share whose kept nodes fill whole
    switches of their own.
    """
    submits = np.array([j.submit for j in jobs], dtype=float)
    if submits.size == 0:
        return dict.fromkeys(SUMMARY_KEYS, 0.0)
    waits = result.starts - submits
    runs = result.ends - result.starts
    span = float(np.max(result.ends) - np.min(submits))
    used = result.node_seconds_useful + result.node_seconds_spares \
        + result.node_seconds_lost_slow
    slowdown = np.maximum(1.0, (waits + runs) / np.maximum(runs, BOUNDED_SLOWDOWN_TAU))
    return {
        "utilisation": _native(used / (result.n_nodes * span)) if span > 0 else 0.0,
        "mean_wait_s": _native(float(waits.mean())),
        "p95_wait_s": _native(float(np.percentile(waits, 95))),
        "mean_bounded_slowdown": _native(float(slowdown.mean())),
        "node_hours_useful": result.node_seconds_useful / 3600.0,
        "node_hours_spares": result.node_seconds_spares / 3600.0,
        "node_hours_lost_slow": result.node_seconds_lost_slow / 3600.0,
        "locality_share": (result.locality_jobs / result.locality_eligible
                           if result.locality_eligible else 0.0),
    }


def makespan(result: ReplayResult, jobs: Sequence[Job]) -> float:
    if not jobs:
        return 0.0
    return float(np.max(result.ends) - min(j.submit for j in jobs))


def job_rows(result: ReplayResult, jobs: Sequence[Job]) -> list[dict]:
    """``{"id", "submit", "start", "end", "nodes"}`` per job, times as in the log."""
    return [{"id": j.id, "submit": _num(j.submit), "start": _num(s), "end": _num(e),
             "nodes": j.nodes}
            for j, s, e in zip(jobs, result.starts.tolist(), result.ends.tolist(), strict=True)]


def _num(value: float) -> float | int:
    """Whole seconds as ints (as logs write them), others as floats."""
    return int(value) if float(value).is_integer() else float(value)


def wait_cdf(result: ReplayResult, jobs: Sequence[Job], points: int = 50) -> dict:
    """Waits at ``points`` evenly spaced quantiles (for the CDF chart)."""
    if not jobs:
        return {"quantiles": [], "wait_s": []}
    waits = result.starts - np.array([j.submit for j in jobs], dtype=float)
    q = np.linspace(0.0, 1.0, points)
    return {"quantiles": q.tolist(), "wait_s": np.quantile(waits, q).tolist()}


def interval(values: Sequence[float], confidence: float = 0.95) -> dict[str, float]:
    """Mean and a Student-t interval over seeds (the mean itself for one seed).

    >>> interval([1.0, 2.0, 3.0])["mean"]
    2.0
    >>> interval([5.0])
    {'mean': 5.0, 'low': 5.0, 'high': 5.0, 'n': 1}
    """
    arr = np.asarray(values, dtype=float)
    mean = float(arr.mean())
    if arr.size < 2:
        return {"mean": mean, "low": mean, "high": mean, "n": int(arr.size)}
    half = float(student_t.ppf(0.5 + confidence / 2, arr.size - 1)
                 * arr.std(ddof=1) / math.sqrt(arr.size))
    return {"mean": mean, "low": mean - half, "high": mean + half, "n": int(arr.size)}
