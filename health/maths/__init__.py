"""Pure spare-node core (docs/domain.md sections 4-5).

* :mod:`.cost` - the closed-form cost model and :func:`recommend_spares`;
* :mod:`.pernode` - the same with one abnormality probability per node;
* :mod:`.montecarlo` - a node-by-node simulation to check the closed form;
* :mod:`.estimation` - ``p_abn``, ``alpha_abn``, ``t_bench`` from benchmark
  histories, with the classification rule and synthetic histories;
* :mod:`.suspicion` - per-node history, posterior and drain candidates;
* :mod:`.selection` - keep the fastest nodes of one job.

Only the standard library, numpy and scipy are used; no Django, no I/O.
Invalid arguments raise ``ValueError`` naming the argument (wrong types
raise :class:`SpareTypeError`, which is both a ``ValueError`` and a
``TypeError``).
"""

from ._validation import SpareTypeError
from .cost import (
    DEFAULT_COMPUTE_FRACTION,
    MAX_FULL_CURVE_POINTS,
    CurvePoint,
    SpareParameters,
    SpareRecommendation,
    evaluate_as_is,
    evaluate_spares,
    p_abn_from_intervals,
    prob_any_abnormal,
    recommend_spares,
    t_cmpt_from_wall,
)
from .estimation import (
    DEFAULT_K,
    DEFAULT_MIN_JOB_NODES,
    DEFAULT_MIN_RATIO,
    DEFAULT_SIGMA_FLOOR,
    RULE_NAME,
    BenchmarkRun,
    Classification,
    Estimate,
    binomial_interval,
    classify,
    classify_runs,
    estimate,
    estimate_by_benchmark,
    ratio_interval,
)
from .montecarlo import MonteCarloResult, simulate_cost
from .pernode import choose_candidates, poisson_binomial_tails, recommend_spares_for_nodes
from .selection import Selection, median, select_fastest
from .suspicion import (
    DEFAULT_DRAIN_PROBABILITY,
    DEFAULT_MAX_RUNS_NEEDED,
    DEFAULT_MIN_RUNS,
    DEFAULT_PRIOR_ABNORMAL,
    DEFAULT_PRIOR_PERSISTENT,
    NodeSuspicion,
    drain_candidates,
    node_suspicion,
    persistence_posterior,
    runs_needed,
)
from .synthetic import accuracy_table, synthetic_history

__all__ = [
    "DEFAULT_COMPUTE_FRACTION",
    "DEFAULT_DRAIN_PROBABILITY",
    "DEFAULT_K",
    "DEFAULT_MAX_RUNS_NEEDED",
    "DEFAULT_MIN_JOB_NODES",
    "DEFAULT_MIN_RATIO",
    "DEFAULT_MIN_RUNS",
    "DEFAULT_PRIOR_ABNORMAL",
    "DEFAULT_PRIOR_PERSISTENT",
    "DEFAULT_SIGMA_FLOOR",
    "MAX_FULL_CURVE_POINTS",
    "RULE_NAME",
    "BenchmarkRun",
    "Classification",
    "CurvePoint",
    "Estimate",
    "MonteCarloResult",
    "NodeSuspicion",
    "Selection",
    "SpareParameters",
    "SpareRecommendation",
    "SpareTypeError",
    "accuracy_table",
    "binomial_interval",
    "choose_candidates",
    "classify",
    "classify_runs",
    "drain_candidates",
    "estimate",
    "estimate_by_benchmark",
    "evaluate_as_is",
    "evaluate_spares",
    "median",
    "node_suspicion",
    "p_abn_from_intervals",
    "persistence_posterior",
    "poisson_binomial_tails",
    "prob_any_abnormal",
    "ratio_interval",
    "recommend_spares",
    "recommend_spares_for_nodes",
    "runs_needed",
    "select_fastest",
    "simulate_cost",
    "synthetic_history",
    "t_cmpt_from_wall",
]
