"""Spare nodes when every candidate node has its own abnormality probability.

Each candidate node ``i`` is abnormal with its own probability ``p_i`` (for
example a posterior estimate from the node's benchmark history, see
:mod:`health.maths.suspicion`).  Candidates are taken in order of
increasing ``p_i``; with ``N_spare = s`` the job gets the ``N_node + s`` least
suspicious candidates, and ``N_abn`` is Poisson-binomial over their ``p_i``.
The cost model is otherwise that of :mod:`health.maths.cost`::

    P[N_abn > 0]  = 1 - prod_i (1 - p_i)
    E[T_total]    = t_bench (1 + (alpha - 1) P[N_abn > 0])
                    + t_cmpt + t_comm + (alpha - 1) t_cmpt P[N_abn > s]
    E[C]          = (N_node + s) E[T_total]

All ``s`` share prefixes of the same sorted list, so the Poisson-binomial
distributions are built incrementally (one candidate at a time, the classic
``pmf' = (1 - p) pmf + p shift(pmf)`` recursion, which only adds
non-negative terms and keeps tail probabilities accurate).  That gives the
whole curve in ``O(M * K)`` operations for ``M`` candidates, where ``K`` is a
provable bound on the number of abnormal nodes that carries any probability
mass above ``1e-19`` (Bernstein's inequality); calling
``scipy.stats.poisson_binom`` once per ``s`` would cost ``O(M^3)``.  The tests
check the recursion against ``scipy.stats.poisson_binom``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ._validation import as_int
from .cost import (
    CurvePoint,
    SpareParameters,
    SpareRecommendation,
    _build,
    _validate_job,
    node_time,
)

__all__ = [
    "choose_candidates",
    "poisson_binomial_tails",
    "recommend_spares_for_nodes",
]

# -ln of the probability mass the recursion may neglect (about 1e-19).
_NEGLECTED_LOG_MASS = 44.0


def _as_probabilities(node_p_abn: Sequence[float]) -> np.ndarray:
    p = np.asarray(node_p_abn, dtype=float)
    if p.ndim != 1:
        raise ValueError("node_p_abn must be a one-dimensional sequence")
    if not np.all(np.isfinite(p)) or np.any((p < 0.0) | (p > 1.0)):
        bad = int(np.flatnonzero(~(np.isfinite(p) & (p >= 0.0) & (p <= 1.0)))[0])
        raise ValueError(f"node_p_abn[{bad}] must be in [0, 1], got {p[bad]!r}")
    return p


def choose_candidates(node_p_abn: Sequence[float], n_total: int) -> tuple[int, ...]:
    """Indices of the ``n_total`` least suspicious candidates.

    Returned in the order they are taken: increasing ``p_i``, ties broken by
    the lower index.

    Examples
    --------
    >>> choose_candidates([0.3, 0.01, 0.2, 0.01], 3)
    (1, 3, 2)
    """
    p = _as_probabilities(node_p_abn)
    n = as_int("n_total", n_total, minimum=0)
    if n > p.size:
        raise ValueError(f"n_total ({n}) exceeds the number of candidates ({p.size})")
    return tuple(np.argsort(p, kind="stable")[:n].tolist())


def _bernstein_cap(p: np.ndarray) -> int:
    """Count above which the total number of abnormal nodes has negligible mass."""
    mean = float(p.sum())
    var = float((p * (1.0 - p)).sum())
    b = 2.0 * _NEGLECTED_LOG_MASS / 3.0
    t = 0.5 * (b + math.sqrt(b * b + 8.0 * _NEGLECTED_LOG_MASS * var))
    return min(p.size, math.ceil(mean + t))


def poisson_binomial_tails(p_sorted: Sequence[float], n_node: int) -> np.ndarray:
    """``P[N_abn > s]`` for the first ``n_node + s`` probabilities, every ``s``.

    Parameters
    ----------
    p_sorted : sequence of float
        Abnormality probabilities in the order the candidates are taken.
    n_node : int
        Nodes the job needs (``1 <= n_node <= len(p_sorted)``).

    Returns
    -------
    numpy.ndarray
        ``tails[s]`` for ``s = 0 .. len(p_sorted) - n_node``; values below
        about ``1e-19`` may be returned as 0.

    Examples
    --------
    >>> tails = poisson_binomial_tails([0.1, 0.1, 0.1], 2)
    >>> [round(x, 4) for x in tails.tolist()]
    [0.19, 0.028]
    """
    p = _as_probabilities(p_sorted)
    n = as_int("n_node", n_node, minimum=1)
    m = p.size
    if n > m:
        raise ValueError(f"n_node ({n}) exceeds the number of candidates ({m})")
    cap = _bernstein_cap(p)
    tails = np.zeros(m - n + 1)
    pmf = np.zeros(cap + 2)  # counts 0..cap+1; mass above cap is neglected
    pmf[0] = 1.0
    top = 0  # highest count with (possibly) non-zero mass
    for k in range(m):
        q = p[k]
        new_top = min(top + 1, cap + 1)
        shifted = pmf[:new_top] * q
        pmf[: new_top + 1] *= 1.0 - q
        pmf[1 : new_top + 1] += shifted
        top = new_top
        s = k + 1 - n
        if s >= 0 and s + 1 <= top:
            tails[s] = pmf[s + 1 : top + 1].sum()
    return np.minimum(tails, 1.0)


def recommend_spares_for_nodes(
    node_p_abn: Sequence[float],
    n_node: int,
    alpha_abn: float,
    t_bench: float,
    t_cmpt: float,
    t_comm: float = 0.0,
    max_curve_points: int | None = None,
    release: bool = False,
) -> SpareRecommendation:
    """Choose ``N_spare`` when every candidate node has its own ``p_i``.

    Parameters
    ----------
    node_p_abn : sequence of float
        ``p_i`` of every candidate node, each in ``[0, 1]``; at least
        ``n_node`` of them.
    n_node : int
        Nodes the application needs, ``>= 1``.
    alpha_abn, t_bench, t_cmpt, t_comm : float
        As in :func:`health.maths.cost.recommend_spares`.
    max_curve_points : int, optional
        Thin the returned curve (the optimum is unaffected).
    release : bool
        Dropped spares are released after the benchmark (they cost only it).

    Returns
    -------
    SpareRecommendation
        The curve covers ``N_spare = 0 .. len(node_p_abn) - n_node``;
        ``chosen`` lists the candidate indices given to the job at the
        optimum (see :func:`choose_candidates`) and ``p_abn`` is their mean
        ``p_i``.  The As-is baseline gives the ``n_node`` least suspicious
        candidates to the job with no benchmark and no spares.

    Examples
    --------
    >>> p = [0.001] * 90 + [0.2] * 20
    >>> rec = recommend_spares_for_nodes(p, 90, alpha_abn=3.0, t_bench=0.1, t_cmpt=10.0)
    >>> rec.n_spare, len(rec.curve), len(rec.chosen)
    (2, 21, 92)
    >>> round(rec.saving_ratio, 3)
    1.116
    """
    n, cmpt, comm = _validate_job(n_node, t_cmpt, t_comm)
    params = SpareParameters(p_abn=0.0, alpha_abn=alpha_abn, t_bench=t_bench)  # validates
    p = _as_probabilities(node_p_abn)
    if p.size < n:
        raise ValueError(f"need at least n_node = {n} candidates, got {p.size}")
    order = np.argsort(p, kind="stable")
    p_sorted = p[order]
    alpha, bench = params.alpha_abn, params.t_bench

    with np.errstate(divide="ignore"):
        log_normal = np.cumsum(np.log1p(-p_sorted))  # log P[no abnormal in prefix]
    p_any = -np.expm1(log_normal[n - 1 :])
    tails = poisson_binomial_tails(p_sorted, n)
    s_values = np.arange(p.size - n + 1, dtype=np.int64)
    bench_part = bench * (1.0 + (alpha - 1.0) * p_any)
    app_part = cmpt + comm + (alpha - 1.0) * cmpt * tails
    times = bench_part + app_part
    costs = node_time(n, n + s_values, bench_part, app_part, release)
    best = int(np.argmin(costs))

    as_is_time = cmpt + comm + (alpha - 1.0) * cmpt * float(p_any[0])
    as_is = CurvePoint(0, n * as_is_time, as_is_time)
    chosen = tuple(order[: n + best].tolist())
    return _build(
        n,
        s_values,
        costs,
        times,
        best,
        as_is,
        max_curve_points,
        p_abn=float(p_sorted[: n + best].mean()),
        alpha_abn=alpha,
        t_bench=bench,
        t_cmpt=cmpt,
        t_comm=comm,
        chosen=chosen,
        release=release,
    )
