"""Whether an ordering's verdict stands beyond the seeds' noise (pure: no Django, no I/O).

An ordering statement is judged on means over seeds (``reproduction.check_statement``).
Two policies a few hundredths apart can swap with the next seed, so each statement is
also read as the pairwise comparisons it makes, each one on the per-seed paired
differences with a two-sided 95 % Student-t interval (the runs of one seed share
their traffic draws, so pairing takes the seed's own noise out):

* ``holds``: every comparison's interval lies on the statement's side;
* ``fails``: at least one comparison's interval lies entirely on the other side;
* ``open``: otherwise; more seeds could turn the verdict.

With fewer than two seeds in common there is no interval, and the answer is ``None``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from statistics import fmean, stdev
from typing import Any

from scipy import stats

__all__ = ["FAILS", "HOLDS", "OPEN", "mean_interval", "statement_noise"]

HOLDS, FAILS, OPEN = "holds", "fails", "open"
#: Slack for comparisons of decimals, as in ``reproduction``.
EPS = 1e-9

#: One comparison: (a, b, low bound, high bound) on ``value_a - value_b`` (badness).
_Pair = tuple[str, str, float | None, float | None]


def mean_interval(values: Sequence[float], confidence: float = 0.95) -> dict[str, Any] | None:
    """Mean and two-sided Student-t interval of ``values``; ``None`` with fewer than 2.

    Parameters
    ----------
    values : sequence of float
        One value per seed.
    confidence : float
        Coverage of the interval (0.95: ``t.ppf(0.975, n - 1)``).

    Returns
    -------
    dict or None
        ``{"mean", "low", "high", "half_width", "n"}``.

    Examples
    --------
    >>> iv = mean_interval([1.0, 2.0, 3.0])
    >>> round(iv["mean"], 6), round(iv["half_width"], 6), iv["n"]
    (2.0, 2.484138, 3)
    >>> mean_interval([0.7]) is None
    True
    """
    n = len(values)
    if n < 2:
        return None
    mean = fmean(values)
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * stdev(values) / math.sqrt(n)
    return {"mean": mean, "low": mean - half, "high": mean + half, "half_width": half, "n": n}


def _pairs(check: Mapping[str, Any], policies: Sequence[str]) -> list[_Pair]:
    """The comparisons a statement makes, each as the range ``bad_a - bad_b`` must
    fall in for the statement to hold (``None``: unbounded on that side)."""
    kind = check["kind"]
    if kind in ("worst", "best"):
        listed = list(check["policies"])
        others = [p for p in policies if p not in listed]
        if kind == "worst":
            return [(a, b, 0.0, None) for a in listed for b in others]
        return [(a, b, None, 0.0) for a in listed for b in others]
    if kind == "worse_than":
        return [(a, b, 0.0, None) for a in check["worse"] for b in check["better"]]
    if kind == "close":
        tol = float(check["tolerance"])
        listed = list(check["policies"])
        return [(a, b, -tol, tol) for i, a in enumerate(listed) for b in listed[i + 1:]]
    raise ValueError(f"unknown ordering check {kind!r}")


def _side(low: float, high: float, lo: float | None, hi: float | None) -> str:
    """Where the interval ``[low, high]`` lies against the range ``[lo, hi]``."""
    inside = (lo is None or low >= lo - EPS) and (hi is None or high <= hi + EPS)
    outside = (lo is not None and high < lo - EPS) or (hi is not None and low > hi + EPS)
    return HOLDS if inside else FAILS if outside else OPEN


def _margin(mean: float, lo: float | None, hi: float | None) -> float:
    """How far the mean lies inside the range (negative: outside)."""
    return min(mean - lo if lo is not None else float("inf"),
               hi - mean if hi is not None else float("inf"))


def statement_noise(check: Mapping[str, Any], per_seed: Mapping[str, Mapping[int, float]],
                    lower_is_better: bool = True) -> dict[str, Any] | None:
    """The verdict of a statement on the seeds' paired intervals.

    Parameters
    ----------
    check : mapping
        The statement, as ``reproduction.check_statement`` takes it.
    per_seed : mapping
        Policy -> seed -> the policy's value on that seed; ``worst`` and ``best``
        compare against every policy given.
    lower_is_better : bool
        Direction of the values.

    Returns
    -------
    dict or None
        ``verdict`` (``holds``, ``fails`` or ``open``), ``seeds`` (how many in common)
        and ``closest``: the comparison that decides (``a``, ``b``, ``mean``,
        ``half_width`` and ``bound`` of ``value_a - value_b``): when the statement
        fails, the one furthest beyond its bound of those whose interval is; otherwise
        the one whose mean lies nearest its bound. ``None`` with fewer than two seeds
        in common.

    Examples
    --------
    >>> close = {"kind": "close", "policies": ["diagonal", "full_spread"], "tolerance": 0.05}
    >>> seeds = {"diagonal": {0: 1.0, 1: 1.0, 2: 1.0},
    ...          "full_spread": {0: 0.93, 1: 0.95, 2: 0.97}}
    >>> result = statement_noise(close, seeds)
    >>> result["verdict"], result["seeds"], round(result["closest"]["mean"], 3)
    ('open', 3, 0.05)
    >>> seeds["full_spread"] = {0: 0.99, 1: 1.0, 2: 1.01}
    >>> statement_noise(close, seeds)["verdict"]
    'holds'
    >>> statement_noise(close, {"diagonal": {0: 1.0}, "full_spread": {0: 0.9}}) is None
    True
    """
    policies = list(per_seed)
    pairs = _pairs(check, policies)
    involved = {p for a, b, _, _ in pairs for p in (a, b)}
    seeds = sorted(set.intersection(*(set(per_seed.get(p, {})) for p in involved))
                   if involved else set())
    if len(seeds) < 2:
        return None
    sign = 1.0 if lower_is_better else -1.0
    judged = []  # (side, margin, comparison)
    for a, b, lo, hi in pairs:
        interval = mean_interval([sign * (per_seed[a][s] - per_seed[b][s]) for s in seeds])
        mean = interval["mean"]
        bound = lo if hi is None or (lo is not None and mean - lo < hi - mean) else hi
        judged.append((_side(interval["low"], interval["high"], lo, hi), _margin(mean, lo, hi),
                       {"a": a, "b": b, "mean": sign * mean,
                        "half_width": interval["half_width"],
                        "bound": None if bound is None else sign * bound}))
    sides = {side for side, _, _ in judged}
    verdict = FAILS if FAILS in sides else HOLDS if sides == {HOLDS} else OPEN
    # Show what decides: a comparison beyond its bound when it fails, else the closest call.
    shown = [j for j in judged if j[0] == FAILS] if verdict == FAILS else judged
    return {"verdict": verdict, "seeds": len(seeds),
            "closest": min(shown, key=lambda j: j[1])[2]}
