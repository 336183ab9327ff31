"""Per-node suspicion: which nodes are abnormal again and again.

From classified node-runs (:func:`health.spares.estimation.classify`),
each node gets a posterior for its own abnormality probability ``p_i``:

* prior ``Beta(a0, b0)`` with mean the fleet ``p`` and ``a0 = prior_abnormal``
  pseudo abnormal runs (so ``a0 + b0 = prior_abnormal / p`` pseudo runs: the
  rarer abnormal runs are in the fleet, the more evidence a node needs);
* posterior ``Beta(a0 + abnormal_runs, b0 + normal_runs)``.

One slow run on a new node therefore does not make it a drain candidate:
with the defaults its posterior mean is about three times the fleet ``p``
and its score about 0.4.  The ``score`` is the posterior probability that
``p_i > drain_factor * p_fleet``; a node is a *drain candidate* when the
score reaches ``drain_probability`` (defaults 3 and 0.9: a node with no
normal run needs 4 abnormal runs; a node abnormal in 30 % of 20 runs at
``p_fleet = 0.026`` qualifies).  ``prior_abnormal = 0.5`` was chosen on
synthetic fleets (300 jobs of 96 nodes from 1,000 nodes, ``p = 0.02``, five
nodes with ``p = 0.4``): all five found, no normal node flagged, over three
seeds; with 1.0 one bad node with 7 abnormal runs in 30 was missed.  The fleet ``p`` defaults
to ``(abnormal + 0.5) / (runs + 1)`` over all runs given, which is never 0
or 1.  Runs are taken to be in chronological order (``evidence`` lists the
latest abnormal ones).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import beta

from ._validation import as_finite, as_int, as_positive
from .estimation import BenchmarkRun, _codes, _Columns, _columns, classify

__all__ = [
    "DEFAULT_DRAIN_FACTOR",
    "DEFAULT_DRAIN_PROBABILITY",
    "DEFAULT_PRIOR_ABNORMAL",
    "NodeSuspicion",
    "drain_candidates",
    "node_suspicion",
]

#: A drain candidate's ``p_i`` exceeds this multiple of the fleet ``p`` ...
DEFAULT_DRAIN_FACTOR: float = 3.0
#: ... with at least this posterior probability.
DEFAULT_DRAIN_PROBABILITY: float = 0.9
#: Prior weight in pseudo abnormal runs (prior mean = fleet ``p``).
DEFAULT_PRIOR_ABNORMAL: float = 0.5


@dataclass(frozen=True)
class NodeSuspicion:
    """History summary and posterior of one node.

    ``mean_slowdown`` is the mean ratio of the node's abnormal runs to their
    job median (None without abnormal runs); ``p_posterior`` and
    ``p_interval`` are the posterior mean and 95 % equal-tailed credible
    interval of the node's ``p_i``; ``score`` is the posterior probability
    that ``p_i > drain_factor * p_fleet``; ``evidence`` holds the job keys of
    the latest abnormal runs (oldest first).
    """

    node: str
    runs: int
    abnormal_runs: int
    abnormal_fraction: float
    mean_slowdown: float | None
    p_posterior: float
    p_interval: tuple[float, float]
    score: float
    drain_candidate: bool
    evidence: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "node": self.node,
            "runs": self.runs,
            "abnormal_runs": self.abnormal_runs,
            "abnormal_fraction": self.abnormal_fraction,
            "mean_slowdown": self.mean_slowdown,
            "p_posterior": self.p_posterior,
            "p_interval": list(self.p_interval),
            "score": self.score,
            "drain_candidate": self.drain_candidate,
            "evidence": list(self.evidence),
        }


def node_suspicion(
    runs: Iterable[BenchmarkRun | Sequence[Any]],
    flags: Sequence[bool] | np.ndarray | None = None,
    ratios: Sequence[float] | np.ndarray | None = None,
    *,
    fleet_p: float | None = None,
    prior_abnormal: float = DEFAULT_PRIOR_ABNORMAL,
    drain_factor: float = DEFAULT_DRAIN_FACTOR,
    drain_probability: float = DEFAULT_DRAIN_PROBABILITY,
    evidence_count: int = 5,
) -> list[NodeSuspicion]:
    """Rank nodes by how likely they are to be repeatedly abnormal.

    Parameters
    ----------
    runs : iterable of BenchmarkRun or (job, node, benchmark, seconds)
        The history, oldest first.
    flags : sequence of bool, optional
        Abnormal flags per run (default: :func:`classify` with its defaults).
    ratios : sequence of float, optional
        Time / job median per run (default: from :func:`classify`).
    fleet_p : float, optional
        Fleet abnormality probability used as the prior mean, in ``(0, 1)``.
    prior_abnormal : float
        Prior weight in pseudo abnormal runs (``> 0``).
    drain_factor, drain_probability : float
        Drain rule: ``P[p_i > drain_factor * fleet_p] >= drain_probability``.
    evidence_count : int
        How many of the latest abnormal job keys to keep per node.

    Returns
    -------
    list of NodeSuspicion
        Sorted by score, then posterior mean (both decreasing), then name.

    Examples
    --------
    >>> runs, flags = [], []
    >>> for j in range(12):
    ...     for i in range(20):
    ...         slow = (i == 3) or (j == 0 and i == 7)
    ...         runs.append(BenchmarkRun(f"j{j}", f"n{i}", "b", 3.0 if slow else 1.0))
    ...         flags.append(slow)
    >>> ranked = node_suspicion(runs, flags)
    >>> [(s.node, s.abnormal_runs, s.drain_candidate) for s in ranked[:3]]
    [('n3', 12, True), ('n7', 1, False), ('n0', 0, False)]
    >>> ranked[0].evidence
    ('j7', 'j8', 'j9', 'j10', 'j11')
    """
    cols = _columns(runs)
    flag_arr, ratio_arr = _flags_and_ratios(cols, flags, ratios)
    a0 = as_positive("prior_abnormal", prior_abnormal)
    factor = as_positive("drain_factor", drain_factor)
    prob = _in_open_unit_interval("drain_probability", drain_probability)
    keep = as_int("evidence_count", evidence_count, minimum=0)
    if fleet_p is None:
        p_fleet = (float(flag_arr.sum()) + 0.5) / (flag_arr.size + 1.0)
    else:
        p_fleet = _in_open_unit_interval("fleet_p", fleet_p)

    codes, names = _codes(cols.node)
    n_nodes = len(names)
    total = np.bincount(codes, minlength=n_nodes)
    bad = np.bincount(codes, weights=flag_arr, minlength=n_nodes).astype(np.int64)
    slow_sum = np.bincount(codes, weights=np.where(flag_arr, ratio_arr, 0.0), minlength=n_nodes)
    post_a = a0 + bad
    post_b = a0 * (1.0 - p_fleet) / p_fleet + (total - bad)
    mean, lo, hi = _posterior_mean_and_interval(post_a, post_b)
    score = beta.sf(min(factor * p_fleet, 1.0), post_a, post_b)
    evidence = _latest_abnormal_jobs(codes, flag_arr, cols.job, n_nodes, keep)
    out = [
        NodeSuspicion(
            node=names[i],
            runs=int(total[i]),
            abnormal_runs=int(bad[i]),
            abnormal_fraction=float(bad[i] / total[i]),
            mean_slowdown=float(slow_sum[i] / bad[i]) if bad[i] else None,
            p_posterior=float(mean[i]),
            p_interval=(float(lo[i]), float(hi[i])),
            score=float(score[i]),
            drain_candidate=bool(score[i] >= prob),
            evidence=evidence[i],
        )
        for i in range(n_nodes)
    ]
    out.sort(key=lambda s: (-s.score, -s.p_posterior, s.node))
    return out


def _flags_and_ratios(
    cols: _Columns,
    flags: Sequence[bool] | np.ndarray | None,
    ratios: Sequence[float] | np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """The abnormal flags and time / job median ratios, one per run; what is not
    given comes from :func:`classify` with its defaults."""
    n_runs = cols.seconds.size
    if flags is None or ratios is None:
        result = classify(
            [
                BenchmarkRun(j, n, b, t)
                for j, n, b, t in zip(
                    cols.job, cols.node, cols.benchmark, cols.seconds.tolist(), strict=True
                )
            ]
        )
        flags = result.flags if flags is None else flags
        ratios = result.ratios if ratios is None else ratios
    flag_arr = np.asarray(flags, dtype=bool)
    ratio_arr = np.asarray(ratios, dtype=float)
    if flag_arr.shape != (n_runs,):
        raise ValueError(f"flags must have one entry per run ({n_runs}), got {flag_arr.shape}")
    if ratio_arr.shape != (n_runs,):
        raise ValueError(f"ratios must have one entry per run ({n_runs}), got {ratio_arr.shape}")
    return flag_arr, ratio_arr


def _in_open_unit_interval(name: str, value: float) -> float:
    """A probability strictly between 0 and 1 (the Beta prior needs both ends open)."""
    out = as_finite(name, value)
    if not 0.0 < out < 1.0:
        raise ValueError(f"{name} must be in (0, 1), got {out!r}")
    return out


def _posterior_mean_and_interval(
    post_a: np.ndarray, post_b: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and 95 % equal-tailed credible interval of each node's Beta posterior."""
    mean = post_a / (post_a + post_b)
    return mean, beta.ppf(0.025, post_a, post_b), beta.ppf(0.975, post_a, post_b)


def _latest_abnormal_jobs(
    codes: np.ndarray, flags: np.ndarray, jobs: list[str], n_nodes: int, keep: int
) -> list[tuple[str, ...]]:
    """Per node, the job keys of its latest ``keep`` abnormal runs (oldest first)."""
    evidence: list[list[str]] = [[] for _ in range(n_nodes)]
    for i in np.flatnonzero(flags).tolist():
        evidence[codes[i]].append(jobs[i])
    return [tuple(items[-keep:]) if keep else () for items in evidence]


def drain_candidates(
    runs: Iterable[BenchmarkRun | Sequence[Any]],
    flags: Sequence[bool] | np.ndarray | None = None,
    ratios: Sequence[float] | np.ndarray | None = None,
    **kwargs: Any,
) -> list[NodeSuspicion]:
    """The drain candidates of :func:`node_suspicion` (same arguments), ranked.

    Examples
    --------
    >>> runs = [BenchmarkRun(f"j{j}", f"n{i}", "b", 5.0 if i == 0 else 1.0)
    ...         for j in range(8) for i in range(12)]
    >>> [s.node for s in drain_candidates(runs)]
    ['n0']
    """
    return [s for s in node_suspicion(runs, flags, ratios, **kwargs) if s.drain_candidate]
