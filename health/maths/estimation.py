"""Estimate ``p_abn``, ``alpha_abn`` and ``t_bench`` from benchmark histories.

docs/domain.md section 5.  Every job that uses the spare-node method records one
benchmark time per allocated node.  From many such node-runs:

1. classify each node-run as normal or abnormal (:func:`classify_runs`);
2. ``t_bench``   = mean time of the normal node-runs (per benchmark kind);
3. ``alpha_abn`` = mean of the abnormal node-runs / mean of the normal ones,
   with a confidence interval for the ratio of means (:func:`ratio_interval`);
4. ``p_abn``     = abnormal node-runs / all node-runs (the maximum-likelihood
   estimate) with a confidence interval (Clopper-Pearson exact by default,
   Wilson score on request).

The classification rule ("job-median log-MAD")
----------------------------------------------
For each benchmark kind separately:

* ``d = log(seconds) - log(reference)``, where the reference is the median
  time of the same job's node-runs (jobs with at least ``min_job_nodes``
  node-runs) or, for smaller jobs, the median over all node-runs of the
  benchmark.  Working on log times relative to the job makes the rule
  scale-free: it needs no threshold in seconds, works for benchmarks with
  different baselines and absorbs job-to-job shifts (other load, clocks).
* ``sigma = max(1.4826 * median(|d|), sigma_floor)`` pooled over every
  node-run of that benchmark in jobs with a reference of their own: a robust
  estimate of the normal spread (the median ignores up to half of the
  node-runs being abnormal).
* A node-run is abnormal when ``d > max(k * sigma, log(min_ratio))``: only
  slow runs count.
* Refinement (``refine=True``, default): the references and ``sigma`` are
  recomputed once from the runs the first pass called normal, and every run
  is classified again.  Slow runs otherwise pull the job median up and
  inflate the MAD (at ``p_abn = 0.1`` by about 14 %), which hides modest
  slowdowns.

Defaults ``k = 5``, ``min_ratio = 1.2``, ``sigma_floor = 0.002``,
``min_job_nodes = 5``, ``refine = True``, chosen by simulation
(:func:`health.maths.synthetic.accuracy_table`, 54 cases, p in {0.005, 0.026, 0.1}, alpha in
{1.5, 3.53, 10}, noise in {0.01, 0.05}, job sizes {16, 96, 512}, 20,000
node-runs each, about 45,000 abnormal runs in total):

=====  =======  ===============  ===============
k      refine   false positives  false negatives
=====  =======  ===============  ===============
4      no       29               4
4      yes      46               1
5      no       0                68
5      yes      0                7
6      no       0                740
6      yes      0                119
=====  =======  ===============  ===============

``k = 5`` keeps the false-positive rate of Gaussian log-noise below 3e-7 per
node-run (negligible next to any ``p_abn`` worth estimating, and a margin
for heavier-tailed real noise), while slowdowns with
``log(alpha_abn) >= (k + 3) sigma`` (``alpha_abn = 1.5`` at 5 % noise is
8.1 sigma) are still found with a miss rate of about 0.1 %.
``min_ratio = 1.2`` is a practical floor: with very repeatable timings a
node 5 % slower is not worth a spare.

What the rule cannot do: it cannot separate abnormal nodes whose slowdown is
comparable to the run-to-run noise (``log(alpha_abn)`` below about
``(k + 3) sigma``, e.g. ``alpha_abn = 1.1`` at 5 % noise), nor slowdowns
below ``min_ratio``.  Such nodes are counted as normal, so ``p_abn`` is then
underestimated and ``t_bench`` slightly inflated.  It also cannot classify a
job's node-runs when half or more of them are abnormal.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import beta, norm
from scipy.stats import t as student_t

from ._validation import SpareTypeError, as_finite, as_int, as_positive

__all__ = [
    "DEFAULT_K",
    "DEFAULT_MIN_JOB_NODES",
    "DEFAULT_MIN_RATIO",
    "DEFAULT_SIGMA_FLOOR",
    "RULE_NAME",
    "BenchmarkRun",
    "Classification",
    "Estimate",
    "binomial_interval",
    "classify",
    "classify_runs",
    "estimate",
    "estimate_by_benchmark",
    "ratio_interval",
]

RULE_NAME = "job-median-log-mad"
#: Threshold in robust standard deviations of the log time.
DEFAULT_K: float = 5.0
#: Smallest slowdown (time / job median) ever called abnormal.
DEFAULT_MIN_RATIO: float = 1.2
#: Smallest robust sigma of the log time (0.2 %), for very repeatable timers.
DEFAULT_SIGMA_FLOOR: float = 0.002
#: Jobs with fewer node-runs use the benchmark-wide median as reference.
DEFAULT_MIN_JOB_NODES: int = 5

_MAD_TO_SIGMA = 1.482602218505602  # 1 / Phi^-1(3/4)


@dataclass(frozen=True, slots=True)
class BenchmarkRun:
    """One node's benchmark time in one job.

    Examples
    --------
    >>> BenchmarkRun("job1", "n001", "stream", 0.0171)
    BenchmarkRun(job='job1', node='n001', benchmark='stream', seconds=0.0171)
    >>> BenchmarkRun("job1", "n001", "stream", float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: seconds must be finite, got nan
    """

    job: str
    node: str
    benchmark: str
    seconds: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "seconds", as_positive("seconds", self.seconds))


@dataclass(frozen=True, eq=False)
class Classification:
    """Result of :func:`classify`.

    ``flags[i]`` is True when run ``i`` is abnormal; ``ratios[i]`` is its
    time divided by its reference (job median); ``rule`` describes the rule,
    its parameters and the thresholds per benchmark.
    """

    flags: np.ndarray
    ratios: np.ndarray
    rule: dict[str, Any]


@dataclass(frozen=True)
class Estimate:
    """Estimated model parameters for one benchmark kind.

    ``alpha_abn`` is None when no node-run was abnormal, ``alpha_abn_interval``
    when fewer than two node-runs of either kind leave no spread to measure
    (:func:`ratio_interval`, at the same ``confidence``).  ``p_abn_interval``
    is a two-sided ``confidence`` interval for ``p_abn`` computed with
    ``interval_method`` (``"clopper-pearson"``: exact, conservative, from
    ``scipy.stats.beta``; or ``"wilson"``).  The interval treats node-runs as
    independent trials; repeatedly bad nodes make it too narrow for the
    fleet (see :mod:`health.maths.suspicion`).
    """

    benchmark: str
    t_bench: float
    alpha_abn: float | None
    p_abn: float
    p_abn_interval: tuple[float, float]
    confidence: float
    interval_method: str
    runs: int
    abnormal_runs: int
    jobs: int
    nodes: int
    rule: dict[str, Any] = field(repr=False)
    alpha_abn_interval: tuple[float, float] | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "benchmark": self.benchmark,
            "t_bench": self.t_bench,
            "alpha_abn": self.alpha_abn,
            "alpha_abn_interval": (None if self.alpha_abn_interval is None
                                   else list(self.alpha_abn_interval)),
            "p_abn": self.p_abn,
            "p_abn_interval": list(self.p_abn_interval),
            "confidence": self.confidence,
            "interval_method": self.interval_method,
            "runs": self.runs,
            "abnormal_runs": self.abnormal_runs,
            "jobs": self.jobs,
            "nodes": self.nodes,
            "rule": self.rule,
        }


# --------------------------------------------------------------------------
# Input handling


@dataclass(frozen=True, eq=False)
class _Columns:
    job: list[str]
    node: list[str]
    benchmark: list[str]
    seconds: np.ndarray


def _columns(runs: Iterable[BenchmarkRun | Sequence[Any]]) -> _Columns:
    items = list(runs)
    if not items:
        raise ValueError("runs is empty: need at least one benchmark run")
    if not all(type(r) is BenchmarkRun for r in items):
        converted = []
        for i, r in enumerate(items):
            if isinstance(r, BenchmarkRun):
                converted.append(r)
                continue
            try:
                job, node, bench, seconds = r
            except (TypeError, ValueError):
                raise SpareTypeError(
                    f"runs[{i}] must be a BenchmarkRun or a (job, node, benchmark, seconds) "
                    f"tuple, got {r!r}"
                ) from None
            try:
                converted.append(BenchmarkRun(str(job), str(node), str(bench), seconds))
            except ValueError as exc:
                raise ValueError(f"runs[{i}]: {exc}") from None
        items = converted
    seconds = np.fromiter((r.seconds for r in items), dtype=float, count=len(items))
    bad = ~(np.isfinite(seconds) & (seconds > 0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"runs[{i}]: seconds must be positive and finite, got {seconds[i]!r}")
    return _Columns(
        job=[r.job for r in items],
        node=[r.node for r in items],
        benchmark=[r.benchmark for r in items],
        seconds=seconds,
    )


def _codes(values: list[str]) -> tuple[np.ndarray, list[str]]:
    """Factorise strings in order of first appearance."""
    index: dict[str, int] = {}
    codes = np.fromiter(
        (index.setdefault(v, len(index)) for v in values), dtype=np.int64, count=len(values)
    )
    return codes, list(index)


def _group_medians(values: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """Median of ``values`` within each group code ``0 .. n_groups - 1``."""
    order = np.lexsort((values, groups))
    sorted_values = values[order]
    counts = np.bincount(groups, minlength=n_groups)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    lo = starts + (counts - 1) // 2
    hi = starts + counts // 2
    safe = counts > 0
    out = np.full(n_groups, np.nan)
    out[safe] = 0.5 * (sorted_values[lo[safe]] + sorted_values[hi[safe]])
    return out


def _rule_parameters(
    k: float, min_ratio: float, sigma_floor: float, min_job_nodes: int, refine: bool = True
) -> dict[str, float | int | bool]:
    k = as_positive("k", k)
    ratio = as_finite("min_ratio", min_ratio)
    if not ratio >= 1.0:
        raise ValueError(f"min_ratio must be >= 1, got {ratio!r}")
    return {
        "k": k,
        "min_ratio": ratio,
        "sigma_floor": as_positive("sigma_floor", sigma_floor),
        "min_job_nodes": as_int("min_job_nodes", min_job_nodes, minimum=2),
        "refine": bool(refine),
    }


def _classify_columns(cols: _Columns, params: dict[str, Any]) -> Classification:
    k, min_ratio = params["k"], params["min_ratio"]
    sigma_floor, min_job_nodes = params["sigma_floor"], params["min_job_nodes"]
    x = np.log(cols.seconds)
    bench_codes, bench_names = _codes(cols.benchmark)
    job_codes, job_names = _codes(cols.job)
    group = bench_codes * len(job_names) + job_codes
    group_ids, group_codes = np.unique(group, return_inverse=True)
    n_groups = group_ids.size
    group_size = np.bincount(group_codes, minlength=n_groups)
    own = group_size[group_codes] >= min_job_nodes  # run's job has its own reference

    n_bench = len(bench_names)
    bench_masks = [bench_codes == b for b in range(n_bench)]

    def one_pass(use: np.ndarray) -> tuple[np.ndarray, list[float], list[float]]:
        """Deviations and per-benchmark (sigma, threshold) from the runs in ``use``."""
        job_ref = _group_medians(x[use], group_codes[use], n_groups)[group_codes]
        bench_ref = _group_medians(x[use], bench_codes[use], n_bench)[bench_codes]
        reference = np.where(own & np.isfinite(job_ref), job_ref, bench_ref)
        d = x - reference
        sigmas, limits = [], []
        for in_b in bench_masks:
            pooled = in_b & own & use
            if not pooled.any():
                pooled = in_b & use
            mad = float(np.median(np.abs(d[pooled])))
            sigma = max(_MAD_TO_SIGMA * mad, sigma_floor)
            sigmas.append(sigma)
            limits.append(max(k * sigma, math.log(min_ratio)))
        return d, sigmas, limits

    def flag(d: np.ndarray, limits: list[float]) -> np.ndarray:
        out = np.zeros(d.size, dtype=bool)
        for in_b, limit in zip(bench_masks, limits, strict=True):
            out[in_b] = d[in_b] > limit
        return out

    # Pass 1 on every run; pass 2 re-centres and re-scales on the runs pass 1
    # called normal, removing the bias slow runs put into the median and MAD.
    d, sigmas, limits = one_pass(np.ones(x.size, dtype=bool))
    first = flag(d, limits)
    if params["refine"] and first.any():
        d, sigmas, limits = one_pass(~first)
    flags = flag(d, limits)
    thresholds: dict[str, dict[str, float | int]] = {}
    for name, in_b, sigma, limit in zip(bench_names, bench_masks, sigmas, limits, strict=True):
        thresholds[name] = {
            "sigma": sigma,
            "log_threshold": limit,
            "ratio_threshold": math.exp(limit),
            "runs": int(in_b.sum()),
            "runs_with_job_reference": int((in_b & own).sum()),
        }
    rule = {
        "name": RULE_NAME,
        "description": (
            "abnormal when log(seconds / reference) > max(k * sigma, log(min_ratio)); "
            "reference = median of the job's node-runs of that benchmark (benchmark-wide "
            "median for jobs with fewer than min_job_nodes node-runs); sigma = "
            "max(1.4826 * MAD of the log deviations pooled per benchmark, sigma_floor); "
            "with refine, reference and sigma are recomputed once without the runs the "
            "first pass flagged"
        ),
        "parameters": dict(params),
        "thresholds": thresholds,
    }
    return Classification(flags=flags, ratios=np.exp(d), rule=rule)


def classify(
    runs: Iterable[BenchmarkRun | Sequence[Any]],
    k: float = DEFAULT_K,
    min_ratio: float = DEFAULT_MIN_RATIO,
    sigma_floor: float = DEFAULT_SIGMA_FLOOR,
    min_job_nodes: int = DEFAULT_MIN_JOB_NODES,
    refine: bool = True,
) -> Classification:
    """Classify node-runs and return flags, slowdown ratios and the rule.

    See the module docstring for the rule and the defaults.

    Examples
    --------
    >>> runs = [BenchmarkRun("j1", f"n{i}", "b", 1.0 + 0.001 * i) for i in range(8)]
    >>> runs.append(BenchmarkRun("j1", "n8", "b", 3.5))
    >>> result = classify(runs)
    >>> result.flags.tolist()
    [False, False, False, False, False, False, False, False, True]
    >>> round(float(result.ratios[-1]), 3)
    3.488
    """
    params = _rule_parameters(k, min_ratio, sigma_floor, min_job_nodes, refine)
    return _classify_columns(_columns(runs), params)


def classify_runs(
    runs: Iterable[BenchmarkRun | Sequence[Any]],
    k: float = DEFAULT_K,
    min_ratio: float = DEFAULT_MIN_RATIO,
    sigma_floor: float = DEFAULT_SIGMA_FLOOR,
    min_job_nodes: int = DEFAULT_MIN_JOB_NODES,
    refine: bool = True,
) -> np.ndarray:
    """Boolean array: True where the node-run is abnormal (see :func:`classify`).

    Examples
    --------
    >>> runs = [("j1", f"n{i}", "b", 0.017) for i in range(6)] + [("j1", "n6", "b", 0.06)]
    >>> classify_runs(runs).tolist()
    [False, False, False, False, False, False, True]
    """
    return classify(runs, k, min_ratio, sigma_floor, min_job_nodes, refine).flags


# --------------------------------------------------------------------------
# Estimation


def binomial_interval(
    successes: int, trials: int, confidence: float = 0.95, method: str = "clopper-pearson"
) -> tuple[float, float]:
    """Two-sided confidence interval for a binomial proportion.

    ``method`` is ``"clopper-pearson"`` (exact: beta quantiles, coverage at
    least ``confidence``) or ``"wilson"`` (score interval, coverage close to
    ``confidence`` on average).

    Examples
    --------
    >>> lo, hi = binomial_interval(5, 192)
    >>> round(lo, 4), round(hi, 4)
    (0.0085, 0.0597)
    >>> binomial_interval(0, 100)[0]
    0.0
    """
    x = as_int("successes", successes, minimum=0)
    n = as_int("trials", trials, minimum=1)
    if x > n:
        raise ValueError(f"successes ({x}) exceeds trials ({n})")
    conf = as_finite("confidence", confidence)
    if not 0.0 < conf < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {conf!r}")
    a = 1.0 - conf
    if method == "clopper-pearson":
        lo = 0.0 if x == 0 else float(beta.ppf(a / 2, x, n - x + 1))
        hi = 1.0 if x == n else float(beta.ppf(1 - a / 2, x + 1, n - x))
    elif method == "wilson":
        z = float(norm.ppf(1 - a / 2))
        phat = x / n
        denom = 1 + z * z / n
        centre = (phat + z * z / (2 * n)) / denom
        half = z * math.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n)) / denom
        lo, hi = max(0.0, centre - half), min(1.0, centre + half)
    else:
        raise ValueError(f"method must be 'clopper-pearson' or 'wilson', got {method!r}")
    return lo, hi


def ratio_interval(
    numerator: np.ndarray, denominator: np.ndarray, confidence: float = 0.95
) -> tuple[float, float] | None:
    """Two-sided confidence interval for ``mean(numerator) / mean(denominator)``.

    The delta method on the log of the ratio: ``se^2 = var(a) / (n_a mean(a)^2)
    + var(b) / (n_b mean(b)^2)``, with Student's t on the Welch-Satterthwaite
    degrees of freedom (abnormal node-runs are few), so the interval is
    ``ratio * exp(-/+ t se)``: positive and asymmetric, as a slowdown's
    uncertainty is.  Like the interval of ``p_abn`` it treats node-runs as
    independent.  None when either sample has fewer than two values.

    Examples
    --------
    >>> lo, hi = ratio_interval(np.array([3.4, 3.6, 3.5]), np.array([0.99, 1.0, 1.01, 1.0]))
    >>> round(lo, 2), round(hi, 2)
    (3.28, 3.74)
    >>> ratio_interval(np.array([3.5]), np.array([1.0, 1.0])) is None
    True
    """
    conf = as_finite("confidence", confidence)
    if not 0.0 < conf < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {conf!r}")
    a = np.asarray(numerator, dtype=float)
    b = np.asarray(denominator, dtype=float)
    if a.size < 2 or b.size < 2:
        return None
    mean_a, mean_b = float(a.mean()), float(b.mean())
    var_a = float(a.var(ddof=1)) / (a.size * mean_a * mean_a)
    var_b = float(b.var(ddof=1)) / (b.size * mean_b * mean_b)
    ratio = mean_a / mean_b
    se = math.sqrt(var_a + var_b)
    if se == 0.0:
        return ratio, ratio
    dof = (var_a + var_b) ** 2 / (var_a**2 / (a.size - 1) + var_b**2 / (b.size - 1))
    half = float(student_t.ppf(1.0 - (1.0 - conf) / 2.0, dof)) * se
    return ratio * math.exp(-half), ratio * math.exp(half)


def _estimate_columns(
    cols: _Columns,
    name: str,
    flags: np.ndarray,
    rule: dict[str, Any],
    confidence: float,
    interval: str,
) -> Estimate:
    seconds = cols.seconds
    n = int(seconds.size)
    n_abn = int(flags.sum())
    if n_abn == n:
        raise ValueError(f"benchmark {name!r}: every node-run is abnormal, no t_bench")
    t_bench = float(seconds[~flags].mean())
    alpha = float(seconds[flags].mean()) / t_bench if n_abn else None
    return Estimate(
        benchmark=name,
        t_bench=t_bench,
        alpha_abn=alpha,
        p_abn=n_abn / n,
        p_abn_interval=binomial_interval(n_abn, n, confidence, interval),
        confidence=float(confidence),
        interval_method=interval,
        runs=n,
        abnormal_runs=n_abn,
        jobs=len(set(cols.job)),
        nodes=len(set(cols.node)),
        rule=rule,
        alpha_abn_interval=(ratio_interval(seconds[flags], seconds[~flags], confidence)
                            if n_abn else None),
    )


def _subset(cols: _Columns, mask: np.ndarray) -> _Columns:
    idx = np.flatnonzero(mask).tolist()
    return _Columns(
        job=[cols.job[i] for i in idx],
        node=[cols.node[i] for i in idx],
        benchmark=[cols.benchmark[i] for i in idx],
        seconds=cols.seconds[mask],
    )


def _rule_for(rule: dict[str, Any], name: str) -> dict[str, Any]:
    return {**rule, "thresholds": {name: rule["thresholds"][name]}}


def estimate(
    runs: Iterable[BenchmarkRun | Sequence[Any]],
    benchmark: str | None = None,
    confidence: float = 0.95,
    *,
    interval: str = "clopper-pearson",
    k: float = DEFAULT_K,
    min_ratio: float = DEFAULT_MIN_RATIO,
    sigma_floor: float = DEFAULT_SIGMA_FLOOR,
    min_job_nodes: int = DEFAULT_MIN_JOB_NODES,
    refine: bool = True,
) -> Estimate:
    """Estimate ``t_bench``, ``alpha_abn`` and ``p_abn`` for one benchmark kind.

    Parameters
    ----------
    runs : iterable of BenchmarkRun or (job, node, benchmark, seconds)
        The history.  Seconds must be positive and finite.
    benchmark : str, optional
        Use only this benchmark kind.  Required when ``runs`` holds several
        kinds (or use :func:`estimate_by_benchmark`).
    confidence : float
        Level of ``p_abn_interval``.
    interval : {"clopper-pearson", "wilson"}
        Interval method (default exact Clopper-Pearson).
    k, min_ratio, sigma_floor, min_job_nodes
        Classification rule parameters (module docstring).

    Examples
    --------
    >>> from health.maths.synthetic import synthetic_history
    >>> runs = synthetic_history(50, 96, p_abn=0.026, alpha_abn=3.53, t_bench=0.0167,
    ...                          noise=0.02, seed=4)
    >>> est = estimate(runs)
    >>> est.runs, est.abnormal_runs, round(est.p_abn, 4)
    (4800, 131, 0.0273)
    >>> round(est.t_bench, 5), round(est.alpha_abn, 2)
    (0.0167, 3.53)
    >>> [round(x, 4) for x in est.p_abn_interval]
    [0.0229, 0.0323]
    """
    params = _rule_parameters(k, min_ratio, sigma_floor, min_job_nodes, refine)
    cols = _columns(runs)
    names = sorted(set(cols.benchmark))
    if benchmark is None:
        if len(names) > 1:
            raise ValueError(
                f"runs hold several benchmarks ({', '.join(names)}): pass benchmark= "
                "or use estimate_by_benchmark()"
            )
        name = names[0]
    else:
        name = str(benchmark)
        if name not in names:
            raise ValueError(f"benchmark {name!r} not in runs (have: {', '.join(names)})")
        if len(names) > 1:
            cols = _subset(cols, np.array([b == name for b in cols.benchmark]))
    result = _classify_columns(cols, params)
    return _estimate_columns(cols, name, result.flags, result.rule, confidence, interval)


def estimate_by_benchmark(
    runs: Iterable[BenchmarkRun | Sequence[Any]],
    confidence: float = 0.95,
    *,
    interval: str = "clopper-pearson",
    k: float = DEFAULT_K,
    min_ratio: float = DEFAULT_MIN_RATIO,
    sigma_floor: float = DEFAULT_SIGMA_FLOOR,
    min_job_nodes: int = DEFAULT_MIN_JOB_NODES,
    refine: bool = True,
) -> dict[str, Estimate]:
    """:func:`estimate` for every benchmark kind, keyed and sorted by name.

    Examples
    --------
    >>> from health.maths.synthetic import synthetic_history
    >>> a = synthetic_history(20, 16, 0.05, 4.0, 0.017, 0.02, seed=1, benchmark="stream")
    >>> b = synthetic_history(20, 16, 0.05, 4.0, 2.5, 0.02, seed=2, benchmark="dgemm")
    >>> {name: round(e.t_bench, 3) for name, e in estimate_by_benchmark(a + b).items()}
    {'dgemm': 2.502, 'stream': 0.017}
    """
    params = _rule_parameters(k, min_ratio, sigma_floor, min_job_nodes, refine)
    cols = _columns(runs)
    result = _classify_columns(cols, params)
    bench = np.array(cols.benchmark, dtype=object)
    out: dict[str, Estimate] = {}
    for name in sorted(set(cols.benchmark)):
        mask = bench == name
        out[name] = _estimate_columns(
            _subset(cols, mask),
            name,
            result.flags[mask],
            _rule_for(result.rule, name),
            confidence,
            interval,
        )
    return out
