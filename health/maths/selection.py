"""Pick the fastest nodes of one job after its benchmark.

The job was given ``N_node + N_spare`` nodes and has one benchmark time per
node; it keeps the ``N_node`` fastest and drops the rest.  Dropped nodes
that look abnormal are reported (candidates for the node's history), and so
are abnormal nodes that had to be kept (more abnormal nodes than spares).
Nodes that may not run the job (drained or down) are never kept, however
fast: they are dropped, and when too few nodes are left the selection keeps
fewer than ``N_node`` and says how many are missing (``short``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._validation import as_finite, as_int
from .estimation import (
    DEFAULT_K,
    DEFAULT_MIN_RATIO,
    DEFAULT_SIGMA_FLOOR,
    _classify_columns,
    _Columns,
    _rule_parameters,
)

__all__ = ["Selection", "median", "select_fastest"]


@dataclass(frozen=True)
class Selection:
    """Outcome of :func:`select_fastest`.

    ``keep`` and ``dropped`` are in increasing time (ties by node name);
    ``abnormal`` are the dropped nodes that look abnormal and
    ``abnormal_kept`` the kept ones (non-empty means too few spares).
    ``unavailable`` are the dropped nodes that were never eligible (drained
    or down); ``short`` is how many fewer than ``n_node`` were kept.
    ``ratio_threshold`` is the time / median ratio above which a node looks
    abnormal; ``rule`` says where it came from.
    """

    keep: list[str]
    dropped: list[str]
    abnormal: list[str]
    abnormal_kept: list[str] = field(default_factory=list)
    median: float = math.nan
    ratio_threshold: float = math.nan
    rule: str = ""
    unavailable: list[str] = field(default_factory=list)
    short: int = 0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "keep": list(self.keep),
            "dropped": list(self.dropped),
            "abnormal": list(self.abnormal),
            "abnormal_kept": list(self.abnormal_kept),
            "median": self.median,
            "ratio_threshold": self.ratio_threshold,
            "rule": self.rule,
            "unavailable": list(self.unavailable),
            "short": self.short,
        }


def select_fastest(
    times: Mapping[str, float],
    n_node: int,
    abnormal_threshold: float | None = None,
    *,
    unavailable: Iterable[str] = (),
    k: float = DEFAULT_K,
    min_ratio: float = DEFAULT_MIN_RATIO,
    sigma_floor: float = DEFAULT_SIGMA_FLOOR,
) -> Selection:
    """Keep the ``n_node`` fastest nodes; flag the abnormal-looking ones.

    Parameters
    ----------
    times : mapping of node name to benchmark time
        Positive, finite times of every node allocated to the job.
    n_node : int
        Nodes to keep, ``1 <= n_node <= len(times)``.
    abnormal_threshold : float, optional
        A node looks abnormal when its time exceeds this multiple of the
        median time (``>= 1``).  Default: the robust rule of
        :mod:`health.maths.estimation` applied to this one job (log
        time minus the median, ``max(k * sigma, log(min_ratio))`` with
        ``sigma`` from the job's own MAD).
    unavailable : iterable of str
        Nodes that must not be kept (drained or down): always dropped, still
        counted in the median and the rule.  When fewer than ``n_node``
        eligible nodes remain, every one of them is kept and ``short`` says
        how many are missing.
    k, min_ratio, sigma_floor : float
        Parameters of the robust rule.

    Examples
    --------
    >>> times = {"a": 1.00, "b": 1.02, "c": 0.99, "d": 3.1, "e": 1.01, "f": 1.00}
    >>> sel = select_fastest(times, 4)
    >>> sel.keep, sel.dropped, sel.abnormal
    (['c', 'a', 'f', 'e'], ['b', 'd'], ['d'])
    >>> select_fastest(times, 5, abnormal_threshold=1.5).abnormal
    ['d']
    >>> sel = select_fastest(times, 4, unavailable={"c"})
    >>> sel.keep, sel.dropped, sel.unavailable
    (['a', 'f', 'e', 'b'], ['c', 'd'], ['c'])
    >>> select_fastest(times, 6, unavailable={"c"}).short
    1
    """
    if not isinstance(times, Mapping):
        raise ValueError("times must be a mapping of node name to time")
    if not times:
        raise ValueError("times is empty")
    n = as_int("n_node", n_node, minimum=1)
    if n > len(times):
        raise ValueError(f"n_node ({n}) exceeds the number of nodes ({len(times)})")
    names = [str(name) for name in times]
    values = []
    for name in names:
        t = as_finite(f"times[{name!r}]", times[name])
        if t <= 0:
            raise ValueError(f"times[{name!r}] must be > 0, got {t!r}")
        values.append(t)
    order = sorted(range(len(names)), key=lambda i: (values[i], names[i]))
    ranked = [names[i] for i in order]
    blocked = {str(name) for name in unavailable}
    keep = [name for name in ranked if name not in blocked][:n]
    kept = set(keep)
    dropped = [name for name in ranked if name not in kept]
    middle = median(values)

    if abnormal_threshold is not None:
        threshold = as_finite("abnormal_threshold", abnormal_threshold)
        if threshold < 1.0:
            raise ValueError(f"abnormal_threshold must be >= 1, got {threshold!r}")
        slow = {name for name, t in zip(names, values, strict=True) if t > threshold * middle}
        rule = f"time > {threshold:g} x median"
    else:
        params = _rule_parameters(k, min_ratio, sigma_floor, 2)
        cols = _Columns(
            job=["job"] * len(names),
            node=names,
            benchmark=["benchmark"] * len(names),
            seconds=np.asarray(values, dtype=float),
        )
        result = _classify_columns(cols, params)
        threshold = float(result.rule["thresholds"]["benchmark"]["ratio_threshold"])
        slow = {name for name, f in zip(names, result.flags.tolist(), strict=True) if f}
        rule = (
            f"log(time / median) > max({params['k']:g} sigma, log({params['min_ratio']:g})), "
            "sigma from the job's MAD"
        )
    return Selection(
        keep=keep,
        dropped=dropped,
        abnormal=[name for name in dropped if name in slow],
        abnormal_kept=[name for name in keep if name in slow],
        median=middle,
        ratio_threshold=threshold,
        rule=rule,
        unavailable=[name for name in dropped if name in blocked],
        short=n - len(keep),
    )


def median(values: Iterable[float]) -> float:
    """The median of benchmark times, as a plain ``float`` (the mean of the two middle
    values when their count is even); the one definition the pages, the ingestion's
    unit check and the selection share.

    Examples
    --------
    >>> median([3.0, 1.0, 2.0]), median([4.0, 1.0, 3.0, 2.0])
    (2.0, 2.5)
    >>> median([])
    Traceback (most recent call last):
    ...
    ValueError: median of no values
    """
    ordered = sorted(values)
    m = len(ordered)
    if not m:
        raise ValueError("median of no values")
    return float(0.5 * (ordered[(m - 1) // 2] + ordered[m // 2]))
