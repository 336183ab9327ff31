"""Per-node suspicion: which nodes are abnormal again and again, and the drain rule.

From classified node-runs (:func:`health.maths.estimation.classify`), each node
with ``k`` abnormal runs out of ``n`` is weighed between two hypotheses
(docs/domain.md section 5.5):

* *normal*: its runs are abnormal only by chance, at the fleet's rate ``p``
  (the fleet ``p_abn``): likelihood ``p^k (1 - p)^(n - k)``;
* *persistently abnormal*: the node has its own rate ``q`` above the fleet's,
  uniform on ``(p, 1)`` before any evidence: likelihood
  ``B(k+1, n-k+1) P[q > p | Beta(k+1, n-k+1)] / (1 - p)``.

With a prior probability ``prior_persistent`` (default 0.01: one node in a
hundred) of the second, the node's *score* is the posterior probability that it
is persistently abnormal. A node is a **drain candidate** when the score reaches
``drain_probability`` (0.9) and it has at least ``min_runs`` (3) runs. The same
rule tells a node on the watch list how many more abnormal runs would make it a
candidate (``runs_needed``).

Why these values: at a fleet ``p`` near 1 % a node abnormal in each of 3 runs
scores above 0.999 (the chance that a normal node does so is ``p^3``, about
2e-6), while one abnormal run never suffices (score 0.3) and two are held back
by ``min_runs`` (two chance abnormal runs in a row happen to about 1 normal
node in 7,000). A score of 0.9 leaves at most 1 in 10 candidates at the
threshold a false alarm, acceptable because a drain is confirmed by an
operator and undone by returning the node; most candidates score far higher.
The more common abnormal runs are in the fleet, the more runs a node needs: at
``p = 0.2``, 6 abnormal runs in a row. On synthetic fleets
(``benchmarks/drain_rule_evidence.py``, docs/evidence/drain_rule.txt) the rule
flags no normal node in 60 fleets, finds the six slow nodes of the trial after
3 rounds (the previous rule, P[p_i > 3 p] >= 0.9, needed 4), and on job
histories finds as many as the previous rule (99 of 100).

Separately, each node's own rate ``p_i`` gets a Beta posterior (prior mean the
fleet ``p``, weight ``prior_abnormal`` pseudo abnormal runs) whose mean feeds
the per-node spare model (section 4.2): ``p_posterior`` and its 95 % interval.
The fleet ``p`` defaults to ``(abnormal + 0.5) / (runs + 1)`` over all runs
given, which is never 0 or 1. Runs are taken to be in chronological order
(``evidence`` lists the latest abnormal ones).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import betaln, expit
from scipy.stats import beta

from ._validation import as_finite, as_int, as_positive
from .estimation import BenchmarkRun, _codes, _Columns, _columns, classify

__all__ = [
    "DEFAULT_DRAIN_PROBABILITY",
    "DEFAULT_MAX_RUNS_NEEDED",
    "DEFAULT_MIN_RUNS",
    "DEFAULT_PRIOR_ABNORMAL",
    "DEFAULT_PRIOR_PERSISTENT",
    "NodeSuspicion",
    "drain_candidates",
    "node_suspicion",
    "persistence_posterior",
    "runs_needed",
]

#: A drain candidate is persistently abnormal with at least this posterior probability ...
DEFAULT_DRAIN_PROBABILITY: float = 0.9
#: ... and has at least this many runs.
DEFAULT_MIN_RUNS: int = 3
#: Prior probability that a node is persistently abnormal (one in a hundred).
DEFAULT_PRIOR_PERSISTENT: float = 0.01
#: Prior weight in pseudo abnormal runs of a node's own ``p_i`` (prior mean = fleet ``p``).
DEFAULT_PRIOR_ABNORMAL: float = 0.5
#: ``runs_needed`` looks this many abnormal runs ahead (None beyond).
DEFAULT_MAX_RUNS_NEEDED: int = 50


@dataclass(frozen=True)
class NodeSuspicion:
    """History summary and posterior of one node.

    ``mean_slowdown`` is the mean ratio of the node's abnormal runs to their
    job median (None without abnormal runs); ``p_posterior`` and
    ``p_interval`` are the posterior mean and 95 % equal-tailed credible
    interval of the node's ``p_i``; ``score`` is the posterior probability
    that the node is persistently abnormal; ``runs_needed`` is how many more
    abnormal runs in a row would make it a drain candidate (0 for a
    candidate, None when more than ``DEFAULT_MAX_RUNS_NEEDED``); ``evidence``
    holds the job keys of the latest abnormal runs (oldest first).
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
    runs_needed: int | None = None

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
            "runs_needed": self.runs_needed,
            "evidence": list(self.evidence),
        }


def persistence_posterior(
    abnormal: np.ndarray | int,
    runs: np.ndarray | int,
    fleet_p: float,
    prior_persistent: float = DEFAULT_PRIOR_PERSISTENT,
) -> np.ndarray:
    """Posterior probability that a node with ``abnormal`` of ``runs`` abnormal runs is
    persistently abnormal (its own rate ``q ~ Uniform(fleet_p, 1)``) rather than
    normal (abnormal at the fleet rate ``fleet_p`` by chance).

    Examples
    --------
    >>> [round(float(persistence_posterior(k, n, 0.0117)), 4)
    ...  for k, n in ((1, 1), (2, 2), (2, 3), (3, 3), (3, 10))]
    [0.304, 0.9614, 0.8629, 0.9994, 0.84]
    >>> round(float(persistence_posterior(3, 3, 0.2)), 3)
    0.283
    """
    k = np.asarray(abnormal, dtype=float)
    n = np.asarray(runs, dtype=float)
    p = _in_open_unit_interval("fleet_p", fleet_p)
    prior = _in_open_unit_interval("prior_persistent", prior_persistent)
    a, b = k + 1.0, n - k + 1.0
    log_persistent = betaln(a, b) + beta.logsf(p, a, b) - np.log1p(-p)
    log_normal = k * np.log(p) + (n - k) * np.log1p(-p)
    log_odds = np.log(prior) - np.log1p(-prior) + log_persistent - log_normal
    return expit(log_odds)


def runs_needed(
    abnormal: np.ndarray,
    runs: np.ndarray,
    fleet_p: float,
    *,
    prior_persistent: float = DEFAULT_PRIOR_PERSISTENT,
    drain_probability: float = DEFAULT_DRAIN_PROBABILITY,
    min_runs: int = DEFAULT_MIN_RUNS,
    max_runs: int = DEFAULT_MAX_RUNS_NEEDED,
) -> list[int | None]:
    """How many more abnormal runs in a row each node needs to become a drain
    candidate by the same rule (0: it is one; None: more than ``max_runs``).

    Examples
    --------
    >>> runs_needed(np.array([3, 2, 1, 0, 2]), np.array([3, 2, 1, 5, 30]), 0.0117)
    [0, 1, 2, 3, 4]
    """
    k = np.asarray(abnormal, dtype=np.int64)
    n = np.asarray(runs, dtype=np.int64)
    out: list[int | None] = [None] * k.size
    open_ = np.ones(k.size, dtype=bool)
    for extra in range(max_runs + 1):
        if not open_.any():
            break
        idx = np.flatnonzero(open_)
        score = persistence_posterior(k[idx] + extra, n[idx] + extra, fleet_p,
                                      prior_persistent)
        hit = (score >= drain_probability) & (n[idx] + extra >= min_runs)
        for i in idx[hit].tolist():
            out[i] = extra
        open_[idx[hit]] = False
    return out


def node_suspicion(
    runs: Iterable[BenchmarkRun | Sequence[Any]],
    flags: Sequence[bool] | np.ndarray | None = None,
    ratios: Sequence[float] | np.ndarray | None = None,
    *,
    fleet_p: float | None = None,
    prior_abnormal: float = DEFAULT_PRIOR_ABNORMAL,
    prior_persistent: float = DEFAULT_PRIOR_PERSISTENT,
    drain_probability: float = DEFAULT_DRAIN_PROBABILITY,
    min_runs: int = DEFAULT_MIN_RUNS,
    evidence_count: int = 5,
) -> list[NodeSuspicion]:
    """Rank nodes by how likely they are to be persistently abnormal.

    Parameters
    ----------
    runs : iterable of BenchmarkRun or (job, node, benchmark, seconds)
        The history, oldest first.
    flags : sequence of bool, optional
        Abnormal flags per run (default: :func:`classify` with its defaults).
    ratios : sequence of float, optional
        Time / job median per run (default: from :func:`classify`).
    fleet_p : float, optional
        Fleet abnormality probability ``p``, in ``(0, 1)``.
    prior_abnormal : float
        Weight of the fleet ``p`` in a node's own ``p_i`` posterior (``> 0``).
    prior_persistent, drain_probability, min_runs
        The drain rule (module docstring): score = P[persistently abnormal]
        >= ``drain_probability`` with at least ``min_runs`` runs.
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

    Six nodes 30 % slower in each of three fleet-wide rounds of 512 nodes are
    candidates after the third round, and watch-list nodes after two:

    >>> rounds = [BenchmarkRun(f"r{r}", f"n{i:03d}", "b", 1.3 if i < 6 else 1.0)
    ...           for r in range(3) for i in range(512)]
    >>> ranked = node_suspicion(rounds, [run.seconds > 1.2 for run in rounds])
    >>> [s.node for s in ranked if s.drain_candidate]
    ['n000', 'n001', 'n002', 'n003', 'n004', 'n005']
    >>> node_suspicion(rounds[:1024], [run.seconds > 1.2 for run in rounds[:1024]])[0].runs_needed
    1
    """
    cols = _columns(runs)
    flag_arr, ratio_arr = _flags_and_ratios(cols, flags, ratios)
    a0 = as_positive("prior_abnormal", prior_abnormal)
    prob = _in_open_unit_interval("drain_probability", drain_probability)
    least = as_int("min_runs", min_runs, minimum=1)
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
    score = persistence_posterior(bad, total, p_fleet, prior_persistent)
    candidate = (score >= prob) & (total >= least)
    needed = runs_needed(bad, total, p_fleet, prior_persistent=prior_persistent,
                         drain_probability=prob, min_runs=least)
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
            drain_candidate=bool(candidate[i]),
            evidence=evidence[i],
            runs_needed=0 if candidate[i] else needed[i],
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
