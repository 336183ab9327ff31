"""Expected cost of over-allocating spare nodes (docs/domain.md section 4).

A job needs ``N_node`` nodes.  It is given ``N_total = N_node + N_spare``
nodes, runs a short benchmark on all of them, drops the ``N_spare`` slowest
and runs the application on the ``N_node`` fastest.  Each allocated node is
abnormal (slower by a factor ``alpha_abn``) with probability ``p_abn``,
independently, so ``N_abn ~ Binomial(N_total, p_abn)`` and::

    P[N_abn > 0]        = 1 - (1 - p_abn)^N_total
    E[T_bench]          = t_bench * (1 + (alpha_abn - 1) * P[N_abn > 0])
    P[N_abn <= N_spare] = binomial CDF at N_spare
    E[T_app]            = t_cmpt + t_comm
                          + (alpha_abn - 1) * t_cmpt * (1 - P[N_abn <= N_spare])
    E[T_total]          = E[T_bench] + E[T_app]
    E[C]                = N_total * E[T_total]          (expected node-time)

"As-is" is the same job without the method: ``t_bench = 0`` and
``N_spare = 0``.

**Released spares** (``release=True``): when the dropped nodes go back to the
scheduler right after the benchmark (``hx-prolog-bench`` shrinks the Slurm
job), they cost only the benchmark, so::

    E[C] = N_total * E[T_bench] + N_node * E[T_app]

``E[T_total]`` is the same in both variants; only who pays for it changes.

Numerics: ``1 - P[N_abn <= N_spare]`` is computed directly as the binomial
survival function (``scipy.stats.binom.sf``), never as ``1 - cdf``, and
``P[N_abn > 0]`` as ``-expm1(N_total * log1p(-p_abn))``; both keep full
relative precision for large ``N_total`` and tiny tail probabilities.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from scipy.stats import binom

from ._validation import SpareTypeError, as_finite, as_int, as_nonnegative, as_positive

__all__ = [
    "DEFAULT_COMPUTE_FRACTION",
    "MAX_FULL_CURVE_POINTS",
    "CurvePoint",
    "SpareParameters",
    "SpareRecommendation",
    "evaluate_as_is",
    "evaluate_spares",
    "node_time",
    "p_abn_from_intervals",
    "prob_any_abnormal",
    "recommend_spares",
    "t_cmpt_from_wall",
]

#: Fraction of a job's wall time (or expected run time) taken as ``t_cmpt``
#: when only the wall time is known.  docs/domain.md section 4.1 asks for "a constant fraction
#: (< 1)" without fixing it; 0.5 is the neutral choice (half computation that
#: an abnormal node slows down, half communication / I/O that it does not).
#: Sites that know their workload should pass their own fraction.
DEFAULT_COMPUTE_FRACTION: float = 0.5

#: Largest number of ``N_spare`` values evaluated one by one when no stride is
#: given; above it :func:`recommend_spares` picks a stride automatically (the
#: optimum stays exact, see there).
MAX_FULL_CURVE_POINTS: int = 1_000_001


@dataclass(frozen=True)
class SpareParameters:
    """Machine-level parameters of the spare-node model.

    Parameters
    ----------
    p_abn : float
        Probability that an allocated node is abnormal, in ``[0, 1]``.
    alpha_abn : float
        Slowdown of an abnormal node, ``> 1``.
    t_bench : float
        Benchmark time on a normal node, ``> 0`` (seconds, or any unit used
        consistently with ``t_cmpt`` and ``t_comm``).

    Examples
    --------
    >>> SpareParameters(p_abn=0.026, alpha_abn=3.53, t_bench=0.0167)
    SpareParameters(p_abn=0.026, alpha_abn=3.53, t_bench=0.0167)
    >>> SpareParameters(p_abn=1.5, alpha_abn=2.0, t_bench=1.0)
    Traceback (most recent call last):
    ...
    ValueError: p_abn must be in [0, 1], got 1.5
    """

    p_abn: float
    alpha_abn: float
    t_bench: float

    def __post_init__(self) -> None:
        p = as_finite("p_abn", self.p_abn)
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p_abn must be in [0, 1], got {p!r}")
        alpha = as_finite("alpha_abn", self.alpha_abn)
        if not alpha > 1.0:
            raise ValueError(f"alpha_abn must be > 1, got {alpha!r}")
        t_bench = as_positive("t_bench", self.t_bench)
        # Store native floats so results never carry numpy scalars.
        object.__setattr__(self, "p_abn", p)
        object.__setattr__(self, "alpha_abn", alpha)
        object.__setattr__(self, "t_bench", t_bench)

    def as_dict(self) -> dict[str, float]:
        """JSON-ready dict of the three parameters."""
        return {"p_abn": self.p_abn, "alpha_abn": self.alpha_abn, "t_bench": self.t_bench}


@dataclass(frozen=True, slots=True)
class CurvePoint:
    """Expected cost and time of one ``N_spare`` choice.

    ``expected_cost`` is ``E[C]`` in node-time units, ``expected_time`` is
    ``E[T_total]``.
    """

    n_spare: int
    expected_cost: float
    expected_time: float

    def as_dict(self) -> dict[str, float | int]:
        """JSON-ready dict."""
        return {
            "n_spare": self.n_spare,
            "expected_cost": self.expected_cost,
            "expected_time": self.expected_time,
        }


@dataclass(frozen=True)
class SpareRecommendation:
    """The ``N_spare`` minimising ``E[C]``, the As-is baseline and the curve.

    ``saving_ratio`` is ``as_is_cost / expected_cost`` (> 1 means the method
    saves node-time).  ``curve`` is a tuple of :class:`CurvePoint` for every
    evaluated ``N_spare`` in increasing order (possibly thinned, see
    :func:`recommend_spares`).  It is built on first access from the three
    parallel ``curve_*`` tuples, because creating 100,001 point objects costs
    more than computing them; plots can read the ``curve_*`` tuples directly.
    ``chosen`` is only set by the per-node variant: the candidate indices
    given to the job at the optimum (for that variant ``p_abn`` is the mean
    ``p_i`` of the chosen candidates). ``release``: costs count the dropped
    spares' benchmark only (they go back to the scheduler after it).
    """

    n_node: int
    n_spare: int
    expected_cost: float
    expected_time: float
    as_is_cost: float
    as_is_time: float
    saving_ratio: float
    p_abn: float
    alpha_abn: float
    t_bench: float
    t_cmpt: float
    t_comm: float
    chosen: tuple[int, ...] | None = None
    release: bool = False
    curve_n_spare: tuple[int, ...] = field(default=(), repr=False)
    curve_expected_cost: tuple[float, ...] = field(default=(), repr=False)
    curve_expected_time: tuple[float, ...] = field(default=(), repr=False)

    @cached_property
    def curve(self) -> tuple[CurvePoint, ...]:
        """``E[C]`` and ``E[T_total]`` against ``N_spare`` (increasing)."""
        return tuple(
            map(CurvePoint, self.curve_n_spare, self.curve_expected_cost, self.curve_expected_time)
        )

    @property
    def n_total(self) -> int:
        """``N_node + N_spare`` at the optimum."""
        return self.n_node + self.n_spare

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready dict (native Python numbers only)."""
        return {
            "n_node": self.n_node,
            "n_spare": self.n_spare,
            "n_total": self.n_total,
            "expected_cost": self.expected_cost,
            "expected_time": self.expected_time,
            "as_is_cost": self.as_is_cost,
            "as_is_time": self.as_is_time,
            "saving_ratio": self.saving_ratio,
            "curve": [
                {"n_spare": s, "expected_cost": c, "expected_time": t}
                for s, c, t in zip(
                    self.curve_n_spare,
                    self.curve_expected_cost,
                    self.curve_expected_time,
                    strict=True,
                )
            ],
            "p_abn": self.p_abn,
            "alpha_abn": self.alpha_abn,
            "t_bench": self.t_bench,
            "t_cmpt": self.t_cmpt,
            "t_comm": self.t_comm,
            "chosen": None if self.chosen is None else list(self.chosen),
            "release": self.release,
        }


def t_cmpt_from_wall(wall_time: float, compute_fraction: float = DEFAULT_COMPUTE_FRACTION) -> float:
    """``t_cmpt`` when only a wall time (or expected run time) is known.

    docs/domain.md section 4.1: ``t_cmpt`` defaults to a constant fraction of the wall time and
    ``t_comm`` to 0.

    Parameters
    ----------
    wall_time : float
        Wall time or expected run time, ``>= 0``.
    compute_fraction : float
        Fraction in ``(0, 1]``; default :data:`DEFAULT_COMPUTE_FRACTION`.

    Examples
    --------
    >>> t_cmpt_from_wall(3600.0)
    1800.0
    >>> t_cmpt_from_wall(100.0, 0.9)
    90.0
    """
    wall = as_nonnegative("wall_time", wall_time)
    frac = as_finite("compute_fraction", compute_fraction)
    if not 0.0 < frac <= 1.0:
        raise ValueError(f"compute_fraction must be in (0, 1], got {frac!r}")
    return wall * frac


def p_abn_from_intervals(mean_fault_interval: float, mean_abnormal_interval: float) -> float:
    """``p_abn`` from interval statistics (docs/domain.md section 5.3).

    If detected failures (which reset the node) and undetected abnormal
    events arrive as Poisson processes with mean intervals ``m_flt`` and
    ``m_abn``, a node is abnormal when allocated with probability
    ``m_flt / (m_flt + m_abn)``.

    Examples
    --------
    >>> p_abn_from_intervals(mean_fault_interval=26.0, mean_abnormal_interval=974.0)
    0.026
    """
    m_flt = as_positive("mean_fault_interval", mean_fault_interval)
    m_abn = as_positive("mean_abnormal_interval", mean_abnormal_interval)
    return m_flt / (m_flt + m_abn)


def prob_any_abnormal(n_total: Any, p_abn: float) -> Any:
    """``P[N_abn > 0] = 1 - (1 - p_abn)^n_total``, accurate for tiny ``p_abn``.

    Works element-wise on arrays; returns a float for scalar input.

    Examples
    --------
    >>> round(prob_any_abnormal(100, 0.005), 6)
    0.39423
    >>> prob_any_abnormal(10, 1.0)
    1.0
    """
    n = np.asarray(n_total, dtype=float)
    if p_abn >= 1.0:
        out = np.where(n > 0, 1.0, 0.0)
    else:
        out = -np.expm1(n * math.log1p(-p_abn))
    return float(out) if out.ndim == 0 else out


def _validate_job(n_node: object, t_cmpt: object, t_comm: object) -> tuple[int, float, float]:
    n = as_int("n_node", n_node, minimum=1)
    cmpt = as_nonnegative("t_cmpt", t_cmpt)
    comm = as_nonnegative("t_comm", t_comm)
    if cmpt + comm <= 0:
        raise ValueError("t_cmpt + t_comm must be > 0")
    return n, cmpt, comm


def node_time(n_node: int, n_total: Any, bench: Any, app: Any, release: bool) -> Any:
    """Expected node-time: every node pays the benchmark and the application, or,
    with ``release``, the dropped spares pay only the benchmark.

    >>> node_time(10, 12, 1.0, 100.0, False), node_time(10, 12, 1.0, 100.0, True)
    (1212.0, 1012.0)
    """
    return n_total * (bench + app) if not release else n_total * bench + n_node * app


def _expected(
    n_node: int,
    n_spare: np.ndarray,
    p: float,
    alpha: float,
    t_bench: float,
    t_cmpt: float,
    t_comm: float,
    release: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised ``(E[C], E[T_total])`` for an integer array of ``N_spare``."""
    n_total = n_node + n_spare
    p_any = prob_any_abnormal(n_total, p)
    # 1 - P[N_abn <= N_spare], computed as a survival function.
    tail = binom.sf(n_spare, n_total, p)
    bench = t_bench * (1.0 + (alpha - 1.0) * p_any)
    app = t_cmpt + t_comm + (alpha - 1.0) * t_cmpt * tail
    return node_time(n_node, n_total, bench, app, release), bench + app


def evaluate_spares(
    n_node: int,
    n_spare: int,
    params: SpareParameters,
    t_cmpt: float,
    t_comm: float = 0.0,
    release: bool = False,
) -> CurvePoint:
    """``E[C]`` and ``E[T_total]`` for one choice of ``N_spare`` (``release``: the
    dropped spares are released after the benchmark).

    Examples
    --------
    >>> params = SpareParameters(p_abn=0.005, alpha_abn=10.0, t_bench=0.1)
    >>> point = evaluate_spares(100, 2, params, t_cmpt=10.0, t_comm=5.0)
    >>> point.n_spare, round(point.expected_cost, 2), round(point.expected_time, 4)
    (2, 1713.41, 16.7982)
    """
    n, cmpt, comm = _validate_job(n_node, t_cmpt, t_comm)
    s = as_int("n_spare", n_spare, minimum=0)
    cost, time = _expected(
        n, np.array([s]), params.p_abn, params.alpha_abn, params.t_bench, cmpt, comm, release
    )
    return CurvePoint(s, float(cost[0]), float(time[0]))


def evaluate_as_is(
    n_node: int, params: SpareParameters, t_cmpt: float, t_comm: float = 0.0
) -> CurvePoint:
    """The As-is job: no benchmark (``t_bench = 0``) and ``N_spare = 0``.

    ``E[T] = t_cmpt + t_comm + (alpha_abn - 1) t_cmpt P[N_abn > 0]`` with
    ``N_total = N_node``.

    Examples
    --------
    >>> params = SpareParameters(p_abn=0.005, alpha_abn=10.0, t_bench=0.1)
    >>> point = evaluate_as_is(100, params, t_cmpt=10.0, t_comm=5.0)
    >>> round(point.expected_time, 4), round(point.expected_cost, 2)
    (50.4807, 5048.07)
    """
    n, cmpt, comm = _validate_job(n_node, t_cmpt, t_comm)
    time = cmpt + comm + (params.alpha_abn - 1.0) * cmpt * prob_any_abnormal(n, params.p_abn)
    return CurvePoint(0, float(n * time), float(time))


def _lower_bounds(
    n_node: int,
    lo: np.ndarray,
    hi: np.ndarray,
    p: float,
    alpha: float,
    t_bench: float,
    t_cmpt: float,
    t_comm: float,
    release: bool = False,
) -> np.ndarray:
    """Lower bound of ``E[C]`` over every integer ``N_spare`` in ``[lo, hi]``.

    For ``s`` in ``[lo, hi]``: ``N_total >= N_node + lo``; ``P[N_abn > 0]``
    grows with ``N_total``; and ``P[Bin(N_node + s, p) > s] >=
    P[Bin(N_node + lo, p) > hi]`` (stochastic dominance in ``N_total`` and a
    lower threshold).  Every factor is non-negative, so the product of the
    bounds bounds the product (in both variants of :func:`node_time`).
    """
    n_total = n_node + lo
    p_any = prob_any_abnormal(n_total, p)
    tail = binom.sf(hi, n_total, p)
    bench = t_bench * (1.0 + (alpha - 1.0) * p_any)
    app = t_cmpt + t_comm + (alpha - 1.0) * t_cmpt * tail
    return node_time(n_node, n_total, bench, app, release)


def _thin(count: int, best: int, max_points: int) -> np.ndarray:
    """At most ``max_points`` evenly spread indices of ``range(count)``.

    Always includes the first and last index and ``best``.
    """
    if count <= max_points:
        return np.arange(count)
    spread = np.linspace(0, count - 1, max_points - 1).round().astype(np.int64)
    return np.union1d(spread, [best])


def _build(
    n_node: int,
    s_values: np.ndarray,
    costs: np.ndarray,
    times: np.ndarray,
    best: int,
    as_is: CurvePoint,
    max_curve_points: int | None,
    *,
    p_abn: float,
    alpha_abn: float,
    t_bench: float,
    t_cmpt: float,
    t_comm: float,
    chosen: tuple[int, ...] | None = None,
    release: bool = False,
) -> SpareRecommendation:
    """Assemble a :class:`SpareRecommendation` (shared with the per-node module)."""
    if max_curve_points is not None:
        max_points = as_int("max_curve_points", max_curve_points, minimum=3)
        idx = _thin(s_values.size, best, max_points)
        s_out, c_out, t_out = s_values[idx], costs[idx], times[idx]
    else:
        s_out, c_out, t_out = s_values, costs, times
    expected_cost = float(costs[best])
    return SpareRecommendation(
        n_node=n_node,
        n_spare=int(s_values[best]),
        expected_cost=expected_cost,
        expected_time=float(times[best]),
        as_is_cost=as_is.expected_cost,
        as_is_time=as_is.expected_time,
        saving_ratio=as_is.expected_cost / expected_cost,
        p_abn=float(p_abn),
        alpha_abn=float(alpha_abn),
        t_bench=float(t_bench),
        t_cmpt=float(t_cmpt),
        t_comm=float(t_comm),
        chosen=chosen,
        release=release,
        curve_n_spare=tuple(s_out.tolist()),
        curve_expected_cost=tuple(c_out.tolist()),
        curve_expected_time=tuple(t_out.tolist()),
    )


def recommend_spares(
    n_node: int,
    params: SpareParameters,
    t_cmpt: float,
    t_comm: float = 0.0,
    stride: int | None = None,
    max_curve_points: int | None = None,
    release: bool = False,
) -> SpareRecommendation:
    """Choose ``N_spare`` in ``0 .. N_node`` minimising ``E[C]``.

    Parameters
    ----------
    n_node : int
        Nodes the application needs, ``>= 1``.
    params : SpareParameters
        ``p_abn``, ``alpha_abn``, ``t_bench``.
    t_cmpt, t_comm : float
        Application time slowed by an abnormal node, and time not slowed;
        finite, ``>= 0``, with a positive sum.  See :func:`t_cmpt_from_wall`
        when only a wall time is known.
    stride : int, optional
        Evaluate the curve only at ``0, stride, 2*stride, ..`` (and
        ``N_node``).  The optimum is still exact: every gap between grid
        points whose provable lower bound of ``E[C]`` does not exceed the
        best grid value is evaluated point by point (branch and bound).
        Default: 1 (every value) unless ``N_node + 1`` exceeds
        :data:`MAX_FULL_CURVE_POINTS`, then the smallest stride that fits.
    max_curve_points : int, optional
        Thin the returned ``curve`` to at most this many evenly spread points
        (``>= 3``); ``N_spare = 0``, the optimum and the last point are always
        kept.  The optimum itself is unaffected.
    release : bool
        The dropped spares go back to the scheduler after the benchmark, so
        they cost only its time (see the module docstring); more spares pay.

    Returns
    -------
    SpareRecommendation
        Ties in ``E[C]`` are broken towards the smaller ``N_spare``.

    Examples
    --------
    >>> params = SpareParameters(p_abn=0.005, alpha_abn=10.0, t_bench=0.1)
    >>> rec = recommend_spares(100, params, t_cmpt=10.0, t_comm=5.0)
    >>> rec.n_spare, round(rec.expected_cost, 1), round(rec.as_is_cost, 1)
    (3, 1610.0, 5048.1)
    >>> round(rec.saving_ratio, 3)
    3.136
    >>> len(rec.curve), rec.curve[0].n_spare, rec.curve[-1].n_spare
    (101, 0, 100)
    >>> released = recommend_spares(100, params, t_cmpt=10.0, t_comm=5.0, release=True)
    >>> released.n_spare >= rec.n_spare, released.expected_cost < rec.expected_cost
    (True, True)
    """
    n, cmpt, comm = _validate_job(n_node, t_cmpt, t_comm)
    if not isinstance(params, SpareParameters):
        raise SpareTypeError(f"params must be a SpareParameters, got {type(params).__name__}")
    if stride is None:
        step = max(1, -(-(n + 1) // MAX_FULL_CURVE_POINTS))
    else:
        step = as_int("stride", stride, minimum=1)
    args = (params.p_abn, params.alpha_abn, params.t_bench, cmpt, comm, bool(release))

    grid = np.arange(0, n + 1, step, dtype=np.int64)
    if grid[-1] != n:
        grid = np.append(grid, n)
    costs, times = _expected(n, grid, *args)

    if step > 1:
        best_cost = costs.min()
        lo, hi = grid[:-1] + 1, grid[1:] - 1
        gaps = hi >= lo
        bounds = np.full(lo.size, np.inf)
        bounds[gaps] = _lower_bounds(n, lo[gaps], hi[gaps], *args)
        # Relative slack guards against rounding in the bound itself.
        open_gaps = np.flatnonzero(bounds <= best_cost * (1.0 + 1e-12))
        if open_gaps.size:
            extra = np.concatenate([np.arange(lo[j], hi[j] + 1) for j in open_gaps])
            extra_costs, extra_times = _expected(n, extra, *args)
            grid = np.concatenate([grid, extra])
            order = np.argsort(grid, kind="stable")
            grid = grid[order]
            costs = np.concatenate([costs, extra_costs])[order]
            times = np.concatenate([times, extra_times])[order]

    best = int(np.argmin(costs))  # first minimum: smallest N_spare on ties
    as_is = evaluate_as_is(n, params, cmpt, comm)
    return _build(
        n,
        grid,
        costs,
        times,
        best,
        as_is,
        max_curve_points,
        p_abn=params.p_abn,
        alpha_abn=params.alpha_abn,
        t_bench=params.t_bench,
        t_cmpt=cmpt,
        t_comm=comm,
        release=bool(release),
    )
