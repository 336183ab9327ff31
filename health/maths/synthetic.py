"""Synthetic benchmark histories with known parameters, and the accuracy study
of the classification rule run on them (docs/domain.md section 5: how the
rule's defaults were chosen). For tests, demos and the evidence scripts."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._validation import as_finite, as_int, as_nonnegative, as_positive
from .estimation import (
    DEFAULT_K,
    DEFAULT_MIN_RATIO,
    BenchmarkRun,
    classify_runs,
    estimate,
)

__all__ = ["accuracy_table", "synthetic_history"]


def _checked(n_jobs, nodes_per_job, p_abn, alpha_abn, t_bench, noise, job_noise,
             n_nodes_pool, bad_nodes, bad_p_abn) -> tuple:
    """:func:`synthetic_history`'s arguments, checked and converted."""
    n_jobs = as_int("n_jobs", n_jobs, minimum=1)
    size = as_int("nodes_per_job", nodes_per_job, minimum=1)
    p = as_finite("p_abn", p_abn)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p_abn must be in [0, 1], got {p!r}")
    alpha = as_finite("alpha_abn", alpha_abn)
    if not alpha >= 1.0:
        raise ValueError(f"alpha_abn must be >= 1, got {alpha!r}")
    base = as_positive("t_bench", t_bench)
    sigma = as_nonnegative("noise", noise)
    job_sigma = as_nonnegative("job_noise", job_noise)
    pool = max(2 * size, 1000) if n_nodes_pool is None else as_int("n_nodes_pool", n_nodes_pool)
    if pool < size:
        raise ValueError(f"n_nodes_pool ({pool}) must be >= nodes_per_job ({size})")
    n_bad = as_int("bad_nodes", bad_nodes, minimum=0)
    if n_bad > pool:
        raise ValueError(f"bad_nodes ({n_bad}) exceeds n_nodes_pool ({pool})")
    bad_p = as_finite("bad_p_abn", bad_p_abn)
    if not 0.0 <= bad_p <= 1.0:
        raise ValueError(f"bad_p_abn must be in [0, 1], got {bad_p!r}")
    return n_jobs, size, p, alpha, base, sigma, job_sigma, pool, n_bad, bad_p


def synthetic_history(
    n_jobs: int,
    nodes_per_job: int,
    p_abn: float,
    alpha_abn: float,
    t_bench: float,
    noise: float = 0.02,
    n_nodes_pool: int | None = None,
    seed: int = 0,
    *,
    benchmark: str = "bench",
    job_noise: float = 0.0,
    bad_nodes: int = 0,
    bad_p_abn: float = 0.5,
    return_flags: bool = False,
) -> list[BenchmarkRun] | tuple[list[BenchmarkRun], np.ndarray]:
    """Generate a benchmark history with known parameters (tests and demos).

    Each job draws ``nodes_per_job`` distinct nodes from a pool of
    ``n_nodes_pool``.  Every node-run is abnormal with probability ``p_abn``
    (``bad_p_abn`` for the first ``bad_nodes`` nodes of the pool, the
    repeatedly bad ones), independently; its time is
    ``t_bench * J * (alpha_abn if abnormal else 1) * exp(noise * Z)`` with
    ``Z`` standard normal and ``J = exp(job_noise * Z_job)`` a per-job factor.

    Parameters
    ----------
    n_jobs, nodes_per_job : int
        History size.
    p_abn, alpha_abn, t_bench : float
        True parameters.
    noise : float
        Lognormal sigma of run-to-run noise (0.05 = about 5 %).
    n_nodes_pool : int, optional
        Number of distinct nodes; default ``max(2 * nodes_per_job, 1000)``.
    seed : int
        Seed of the ``numpy.random.Generator``.
    benchmark : str
        Benchmark name of every run.
    job_noise : float
        Lognormal sigma of a per-job factor.
    bad_nodes : int
        How many nodes of the pool are abnormal with ``bad_p_abn``.
    bad_p_abn : float
        Abnormality probability of the bad nodes.
    return_flags : bool
        Also return the true abnormal flags.

    Returns
    -------
    list of BenchmarkRun, or (list, numpy.ndarray of bool)

    Examples
    --------
    >>> runs = synthetic_history(2, 96, 0.026, 3.53, 0.0167, noise=0.01, seed=0)
    >>> len(runs), runs[0].job, runs[0].benchmark
    (192, 'job000000', 'bench')
    """
    n_jobs, size, p, alpha, base, sigma, job_sigma, pool, n_bad, bad_p = _checked(
        n_jobs, nodes_per_job, p_abn, alpha_abn, t_bench, noise, job_noise, n_nodes_pool,
        bad_nodes, bad_p_abn)
    rng = np.random.default_rng(as_int("seed", seed))

    node_p = np.full(pool, p)
    node_p[:n_bad] = bad_p
    nodes = np.empty((n_jobs, size), dtype=np.int64)
    for j in range(n_jobs):
        nodes[j] = rng.choice(pool, size=size, replace=False)
    abnormal = rng.random((n_jobs, size)) < node_p[nodes]
    job_factor = np.exp(job_sigma * rng.standard_normal(n_jobs))[:, None]
    seconds = (
        base
        * job_factor
        * np.where(abnormal, alpha, 1.0)
        * np.exp(sigma * rng.standard_normal((n_jobs, size)))
    )
    width = max(5, len(str(pool - 1)))
    node_names = [f"n{i:0{width}d}" for i in range(pool)]
    runs = [
        BenchmarkRun(f"job{j:06d}", node_names[i], benchmark, t)
        for j, (row_nodes, row_t) in enumerate(zip(nodes.tolist(), seconds.tolist(), strict=True))
        for i, t in zip(row_nodes, row_t, strict=True)
    ]
    if return_flags:
        return runs, abnormal.ravel()
    return runs


def accuracy_table(
    p_values: Sequence[float] = (0.005, 0.026, 0.1),
    alpha_values: Sequence[float] = (1.5, 3.53, 10.0),
    noise_values: Sequence[float] = (0.01, 0.05),
    job_sizes: Sequence[int] = (16, 96, 512),
    runs_per_case: int = 20_000,
    t_bench: float = 0.0167,
    seed: int = 0,
    k: float = DEFAULT_K,
    min_ratio: float = DEFAULT_MIN_RATIO,
    refine: bool = True,
) -> list[dict[str, Any]]:
    """Estimate from synthetic histories over a grid of true parameters.

    One history of about ``runs_per_case`` node-runs per grid point.  Each
    row holds the truth, the estimates, the relative errors, the
    classification errors (false positives and negatives against the true
    flags), whether the true ``p_abn`` lies in the 95 % interval, and
    ``separable`` (``log(alpha) >= (k + 3) * noise``, where the rule is meant
    to work).

    Examples
    --------
    >>> rows = accuracy_table((0.026,), (3.53,), (0.01,), (96,), runs_per_case=2000)
    >>> rows[0]["separable"], rows[0]["false_positives"], rows[0]["covered"]
    (True, 0, True)
    """
    rows: list[dict[str, Any]] = []
    case = 0
    for p in p_values:
        for alpha in alpha_values:
            for noise in noise_values:
                for size in job_sizes:
                    n_jobs = max(1, round(runs_per_case / size))
                    runs, truth = synthetic_history(
                        n_jobs,
                        size,
                        p,
                        alpha,
                        t_bench,
                        noise,
                        seed=seed + case,
                        return_flags=True,
                    )
                    case += 1
                    flags = classify_runs(runs, k=k, min_ratio=min_ratio, refine=refine)
                    est = estimate(runs, k=k, min_ratio=min_ratio, refine=refine)
                    lo, hi = est.p_abn_interval
                    alpha_hat = est.alpha_abn
                    rows.append(
                        {
                            "p_abn": p,
                            "alpha_abn": alpha,
                            "noise": noise,
                            "job_size": size,
                            "runs": est.runs,
                            "true_abnormal": int(truth.sum()),
                            "abnormal_runs": est.abnormal_runs,
                            "false_positives": int((flags & ~truth).sum()),
                            "false_negatives": int((~flags & truth).sum()),
                            "p_hat": est.p_abn,
                            "p_rel_error": est.p_abn / p - 1.0,
                            "covered": bool(lo <= p <= hi),
                            "alpha_hat": alpha_hat,
                            "alpha_rel_error": None if alpha_hat is None else alpha_hat / alpha - 1,
                            "t_bench_rel_error": est.t_bench / t_bench - 1.0,
                            "separable": math.log(alpha) >= (k + 3.0) * noise,
                        }
                    )
    return rows
