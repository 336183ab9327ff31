"""Monte Carlo check of the spare-node cost model.

Simulates the process of docs/domain.md section 4 node by node, without using the
closed form: allocate ``N_total = N_node + N_spare`` nodes, each abnormal with
probability ``p_abn``; benchmark every node (``t_bench``, or
``alpha_abn * t_bench`` when abnormal); the job's benchmark time is the
slowest node's; drop the ``N_spare`` slowest nodes; run the application for
``t_comm + t_cmpt * (alpha_abn if an abnormal node remains else 1)``.  The
cost of a trial is ``N_total * (benchmark time + application time)``.

Optionally the benchmark times get multiplicative lognormal noise
(``bench_noise``), which the closed form ignores: then dropping the slowest
nodes can miss an abnormal node when ``alpha_abn`` is close to 1.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy.stats import binom

from ._validation import as_int, as_nonnegative
from .cost import SpareParameters, _validate_job, evaluate_spares, prob_any_abnormal

__all__ = ["MonteCarloResult", "simulate_cost"]

# Upper bound on the number of simulated node-trials held in memory at once.
_CHUNK_ELEMENTS = 2_000_000


@dataclass(frozen=True)
class MonteCarloResult:
    """Sample means of a Monte Carlo run, next to the closed-form values.

    ``stderr`` and ``time_stderr`` are standard errors of ``mean_cost`` and
    ``mean_time`` estimated from the sample.  ``model_stderr`` is the
    standard error the closed form predicts (the cost of one trial takes at
    most three values, so its variance is known exactly) and
    ``z_score = (mean_cost - expected_cost) / model_stderr`` (0.0 when the
    cost cannot vary).  The model's standard error is used because the
    sample one collapses when the events that carry the cost are rarer than
    ``1 / trials``.  ``p_abnormal_kept`` is the fraction of trials in which an
    abnormal node stayed in the job.
    """

    n_node: int
    n_spare: int
    trials: int
    seed: int
    mean_cost: float
    stderr: float
    mean_time: float
    time_stderr: float
    p_abnormal_kept: float
    expected_cost: float
    expected_time: float
    model_stderr: float
    z_score: float

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)


def _model_time_variance(
    n_total: int, n_spare: int, p: float, alpha: float, t_bench: float, t_cmpt: float
) -> float:
    """Variance of one trial's total time under the closed-form model.

    ``T = const + (alpha - 1) (t_bench I1 + t_cmpt I2)`` with
    ``I1 = [N_abn > 0]`` and ``I2 = [N_abn > N_spare]``; ``I2`` implies
    ``I1``, so ``Cov(I1, I2) = q2 (1 - q1)``.
    """
    q1 = float(prob_any_abnormal(n_total, p))
    q2 = float(binom.sf(n_spare, n_total, p))
    var = (
        t_bench**2 * q1 * (1.0 - q1)
        + t_cmpt**2 * q2 * (1.0 - q2)
        + 2.0 * t_bench * t_cmpt * q2 * (1.0 - q1)
    )
    return (alpha - 1.0) ** 2 * max(var, 0.0)


def simulate_cost(
    n_node: int,
    n_spare: int,
    params: SpareParameters,
    t_cmpt: float,
    t_comm: float = 0.0,
    trials: int = 20_000,
    seed: int = 0,
    bench_noise: float = 0.0,
) -> MonteCarloResult:
    """Simulate the over-allocate / benchmark / drop process ``trials`` times.

    Parameters
    ----------
    n_node, n_spare : int
        Nodes needed (``>= 1``) and spares (``>= 0``).
    params : SpareParameters
        ``p_abn``, ``alpha_abn``, ``t_bench``.
    t_cmpt, t_comm : float
        Application times, as in :func:`health.maths.cost.recommend_spares`.
    trials : int
        Number of simulated jobs (``>= 2``).  Work is ``O(trials * N_total)``.
    seed : int
        Seed of the ``numpy.random.Generator``; same seed, same result.
    bench_noise : float
        Sigma of a lognormal factor (median 1) on every node's benchmark
        time; 0 (default) reproduces the model exactly.

    Returns
    -------
    MonteCarloResult

    Examples
    --------
    >>> params = SpareParameters(p_abn=0.026, alpha_abn=3.53, t_bench=0.0167)
    >>> res = simulate_cost(100, 7, params, t_cmpt=50.0, t_comm=50.0, trials=4000, seed=1)
    >>> abs(res.z_score) < 4
    True
    >>> round(res.expected_cost, 1)
    10800.6
    """
    n, cmpt, comm = _validate_job(n_node, t_cmpt, t_comm)
    s = as_int("n_spare", n_spare, minimum=0)
    n_trials = as_int("trials", trials, minimum=2)
    seed = as_int("seed", seed)
    noise = as_nonnegative("bench_noise", bench_noise)
    p, alpha, t_bench = params.p_abn, params.alpha_abn, params.t_bench
    n_total = n + s

    rng = np.random.default_rng(seed)
    chunk = max(1, _CHUNK_ELEMENTS // n_total)
    costs: list[np.ndarray] = []
    times: list[np.ndarray] = []
    kept: list[np.ndarray] = []
    done = 0
    while done < n_trials:
        m = min(chunk, n_trials - done)
        abnormal = rng.random((m, n_total)) < p
        bench = np.where(abnormal, alpha * t_bench, t_bench)
        if noise > 0:
            bench *= rng.lognormal(0.0, noise, size=bench.shape)
        job_bench = bench.max(axis=1)
        if s == 0:
            abnormal_kept = abnormal.any(axis=1)
        else:
            fastest = np.argpartition(bench, n - 1, axis=1)[:, :n]
            abnormal_kept = np.take_along_axis(abnormal, fastest, axis=1).any(axis=1)
        app = comm + cmpt * np.where(abnormal_kept, alpha, 1.0)
        total = job_bench + app
        times.append(total)
        costs.append(n_total * total)
        kept.append(abnormal_kept)
        done += m

    cost_all = np.concatenate(costs)
    time_all = np.concatenate(times)
    mean_cost = float(cost_all.mean())
    stderr = float(cost_all.std(ddof=1) / math.sqrt(n_trials))
    model = evaluate_spares(n, s, params, cmpt, comm)
    model_se = n_total * math.sqrt(
        _model_time_variance(n_total, s, p, alpha, t_bench, cmpt) / n_trials
    )
    z = (mean_cost - model.expected_cost) / model_se if model_se > 0 else 0.0
    return MonteCarloResult(
        n_node=n,
        n_spare=s,
        trials=n_trials,
        seed=seed,
        mean_cost=mean_cost,
        stderr=stderr,
        mean_time=float(time_all.mean()),
        time_stderr=float(time_all.std(ddof=1) / math.sqrt(n_trials)),
        p_abnormal_kept=float(np.concatenate(kept).mean()),
        expected_cost=model.expected_cost,
        expected_time=model.expected_time,
        model_stderr=model_se,
        z_score=float(z),
    )
