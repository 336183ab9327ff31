"""Synthetic workloads from the Lublin & Feitelson (2003) model of rigid batch jobs.

U. Lublin and D. G. Feitelson, "The workload on parallel supercomputers:
modeling the characteristics of rigid jobs", J. Parallel Distrib. Comput.
63(11), 2003. The published parameters for batch jobs are used unchanged:

* **Size.** :func:`allocation.hyperx.job_sizes.lublin_sizes` (serial with
  probability 0.2927, else a two-stage log-uniform law, two thirds rounded to
  powers of two).
* **Run time.** ``ln(run time)`` is hyper-gamma: Gamma(``A1 = 6.57``,
  ``B1 = 0.823``) with probability ``p = PA * nodes + PB`` (``PA = -0.003``,
  ``PB = 0.6986``, clipped to [0, 1]), else Gamma(``A2 = 639.1``,
  ``B2 = 0.0156``); draws above ``ln t = 12`` (about two days) are redrawn.
* **Arrivals.** ``ln(inter-arrival)`` at rush hour is Gamma(``AARR = 6.0415``
  x ``ARAR = 1.0519``, ``BARR = 0.8531``), redrawn above 13; the day is 48
  half-hour buckets weighted by Gamma(``ANUM = 6.1271``, ``BNUM = 5.2740``)
  cdf mass (the model's day starts at bucket 11), and an inter-arrival is
  spent through the buckets' weights, so nights are quieter than afternoons.

The model does not give requested time limits; here a job asks for the
smallest of 15 min, 30 min, 1, 2, 4, 8, 12, 24 and 48 hours that is at least
its run time times ``1 + Exp(1)`` (users overestimate), and ``load`` divides
the inter-arrival times so an operator can set how busy the month is.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import gamma as gamma_dist

from allocation.hyperx.job_sizes import LUBLIN_SIZES, lublin_sizes

from .workload import Job, Workload

__all__ = ["LUBLIN_BATCH", "synthetic_workload"]

#: The published batch-job parameters (names as in the paper's model).
LUBLIN_BATCH = {
    **LUBLIN_SIZES,
    "A1": 6.57, "B1": 0.823, "A2": 639.1, "B2": 0.0156, "PA": -0.003, "PB": 0.6986,
    "AARR": 6.0415, "BARR": 0.8531, "ANUM": 6.1271, "BNUM": 5.2740, "ARAR": 1.0519,
    "MAX_LN_RUNTIME": 12.0, "MAX_LN_INTERARRIVAL": 13.0,
}
_BUCKETS = 48
_BUCKET_SECONDS = 86400 / _BUCKETS
_DAY_START_BUCKET = 11
_LIMITS = np.array([900, 1800, 3600, 7200, 14400, 28800, 43200, 86400, 172800], dtype=float)


def _bucket_weights(p: dict) -> np.ndarray:
    i = np.arange(_DAY_START_BUCKET, _BUCKETS + _DAY_START_BUCKET, dtype=float)
    mass = (gamma_dist.cdf(i + 0.5, p["ANUM"], scale=p["BNUM"])
            - gamma_dist.cdf(i - 0.5, p["ANUM"], scale=p["BNUM"]))
    weights = np.empty(_BUCKETS)
    weights[(i.astype(int) - 1) % _BUCKETS] = mass
    return weights / weights.mean()


def _runtimes(rng: np.random.Generator, sizes: np.ndarray, p: dict) -> np.ndarray:
    prob = np.clip(p["PA"] * sizes + p["PB"], 0.0, 1.0)
    out = np.empty(sizes.size)
    todo = np.arange(sizes.size)
    while todo.size:
        first = rng.random(todo.size) < prob[todo]
        draw = np.where(first, rng.gamma(p["A1"], p["B1"], todo.size),
                        rng.gamma(p["A2"], p["B2"], todo.size))
        ok = draw <= p["MAX_LN_RUNTIME"]
        out[todo[ok]] = draw[ok]
        todo = todo[~ok]
    return np.maximum(1.0, np.floor(np.exp(out)))


def _arrivals(rng: np.random.Generator, horizon: float, load: float, p: dict) -> np.ndarray:
    weights = _bucket_weights(p)
    times = []
    now, bucket, points, remainder = 0.0, 0, 0.0, 0.0
    while now < horizon:
        ln_gap = rng.gamma(p["AARR"] * p["ARAR"], p["BARR"])
        if ln_gap > p["MAX_LN_INTERARRIVAL"]:
            continue
        points += math.exp(ln_gap) / load / _BUCKET_SECONDS
        gap = 0.0
        while points > weights[bucket]:
            points -= weights[bucket]
            bucket = (bucket + 1) % _BUCKETS
            gap += _BUCKET_SECONDS
        new_remainder = points / weights[bucket]
        gap += _BUCKET_SECONDS * (new_remainder - remainder)
        remainder = new_remainder
        now += gap
        if now < horizon:
            times.append(math.floor(now))
    return np.array(times, dtype=float)


def synthetic_workload(n_nodes: int, *, days: float = 30.0, load: float = 1.0,
                       seed: int = 0, max_jobs: int | None = None,
                       params: dict | None = None) -> Workload:
    """A synthetic log of ``days`` days for a machine of ``n_nodes`` nodes.

    Jobs start at their submit time in the record (no real schedule exists);
    the replay computes waits. ``max_jobs`` cuts the log after that many jobs.

    >>> w = synthetic_workload(512, days=2, seed=1)
    >>> len(w.jobs) > 100, all(1 <= j.nodes <= 512 for j in w.jobs)
    (True, True)
    >>> all(j.timelimit >= j.runtime for j in w.jobs)
    True
    >>> synthetic_workload(512, days=2, seed=1).jobs == w.jobs
    True
    """
    if n_nodes < 1 or days <= 0 or load <= 0:
        raise ValueError("n_nodes, days and load must be positive")
    p = {**LUBLIN_BATCH, **(params or {})}
    rng = np.random.default_rng(seed)
    submits = _arrivals(rng, days * 86400.0, load, p)
    if max_jobs is not None:
        submits = submits[:max_jobs]
    sizes = lublin_sizes(rng, submits.size, n_nodes, p)
    runs = _runtimes(rng, sizes, p)
    wanted = runs * (1.0 + rng.exponential(1.0, runs.size))
    idx = np.minimum(np.searchsorted(_LIMITS, wanted), _LIMITS.size - 1)
    limits = np.maximum(_LIMITS[idx], runs)
    jobs = tuple(
        Job(id=i + 1, submit=float(s), start=float(s), end=float(s + r), nodes=int(n),
            timelimit=float(lim))
        for i, (s, n, r, lim) in enumerate(zip(submits, sizes, runs, limits, strict=True)))
    return Workload(jobs=jobs, header={"model": "Lublin & Feitelson 2003 (batch)",
                                       "days": str(days), "load": str(load),
                                       "seed": str(seed)}, source="synthetic")
