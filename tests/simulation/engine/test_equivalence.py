"""The event-driven engine against the engine before it (commit d4fd27d).

``baseline_stats.json`` holds, for the workloads of
``benchmarks/make_baseline_stats.py`` (open loop at low and high load under
every routing, the fallback port choice, the round-robin allocator, kernels,
escalation and interference), the per-seed throughput, mean latency,
makespan and phit-hops of the old engine over 20 seeds.  The new engine
skips evaluations that are certain to fail and draws arrivals as geometric
gaps, so it consumes the random stream differently: the same seed gives a
different run of the *same* stochastic model.  Hence:

- workloads that draw no random number in the loop (DOR, round-robin
  allocator, closed-loop kernels) must give bit-identical results;
- every other one must agree in distribution: for each metric, a Welch
  two-sample t-test of the 20 new against the 20 old values must not
  reject equal means at the 0.001 level (13 workloads x 4-5 metrics: at
  that level a false alarm anywhere has probability below 6 %; a real shift
  of a few standard errors is caught).
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from scipy import stats

ROOT = Path(__file__).resolve().parents[3]
FIXTURE = Path(__file__).with_name("baseline_stats.json")
ALPHA = 0.001
SLOW = {"interference_all2all_omniwar"}


def _baseline_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "make_baseline_stats", ROOT / "benchmarks" / "make_baseline_stats.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


MBS = _baseline_module()
BASE = json.loads(FIXTURE.read_text())


def _params() -> list:
    return [
        pytest.param(name, marks=pytest.mark.slow) if name in SLOW else name
        for name in MBS.CONFIGS
    ]


def test_fixture_covers_every_workload() -> None:
    assert set(BASE["configs"]) == set(MBS.CONFIGS)
    assert BASE["seeds"] == list(MBS.SEEDS)
    for name, (_, _, exact) in MBS.CONFIGS.items():
        assert BASE["configs"][name]["exact"] == exact


def welch_p(new: np.ndarray, old: np.ndarray) -> float:
    """Two-sided Welch t-test p-value; 1.0 (equal) or 0.0 when both samples are constant.

    Examples
    --------
    >>> welch_p(np.array([1.0, 1.0]), np.array([1.0, 1.0]))
    1.0
    >>> round(welch_p(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0])), 3)
    1.0
    """
    if np.var(new) == 0 and np.var(old) == 0:
        return 1.0 if new.mean() == old.mean() else 0.0
    return float(stats.ttest_ind(new, old, equal_var=False).pvalue)


@pytest.mark.parametrize("name", _params())
def test_new_engine_matches_the_old_one(name: str) -> None:
    old = BASE["configs"][name]["values"]
    runs = [MBS.measure(name, seed) for seed in BASE["seeds"]]
    new = {k: [r.get(k) for r in runs] for k in old}
    if BASE["configs"][name]["exact"]:
        assert new == old
        return
    failures = []
    for metric, old_vals in old.items():
        if old_vals[0] is None:  # no makespan for open-loop runs
            assert all(v is None for v in new[metric])
            continue
        x = np.asarray(new[metric], dtype=float)
        y = np.asarray(old_vals, dtype=float)
        assert not np.isnan(x).any(), metric
        p = welch_p(x, y)
        if not p > ALPHA:
            se = math.sqrt(x.var(ddof=1) / len(x) + y.var(ddof=1) / len(y))
            failures.append(f"{metric}: new {x.mean():.5g} vs old {y.mean():.5g} "
                            f"(standard error {se:.3g}, p = {p:.2g})")
    assert not failures, f"{name}: " + "; ".join(failures)
