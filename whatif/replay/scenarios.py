"""A study: every policy x spare rule, several seeds, gathered in the shape of
the contract (``scenarios`` with ``policy``, ``spares``, ``summary``, ``jobs``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from allocation.hyperx import ONLINE_POLICIES, HyperX

from .engine import ReplayResult, replay
from .metrics import BETTER, SUMMARY_KEYS, interval, job_rows, makespan, summarise, wait_cdf
from .model import ModelParameters, SpareRule
from .workload import Job

__all__ = ["Scenario", "best_marks", "gather", "run_one", "run_study"]


@dataclass(frozen=True)
class Scenario:
    policy: str
    spares: SpareRule

    def __post_init__(self) -> None:
        if self.policy not in ONLINE_POLICIES:
            raise ValueError(f"unknown policy {self.policy!r}; expected one of "
                             f"{', '.join(ONLINE_POLICIES)}")


def run_one(jobs: Sequence[Job], topology: HyperX, scenario: Scenario,
            model: ModelParameters, seed: int,
            progress: Callable[[float], None] | None = None) -> dict:
    """One scenario and seed, as a JSON-ready dict (what a task stores)."""
    result: ReplayResult = replay(jobs, topology, scenario.policy, scenario.spares, model,
                                  seed=seed, progress=progress)
    return {
        "policy": scenario.policy, "spares": scenario.spares.label, "seed": seed,
        "summary": summarise(result, jobs),
        "makespan_s": makespan(result, jobs),
        "timeouts": result.timeouts,
        "factor_source": result.factor_source,
        "series": result.series,
        "wait_cdf": wait_cdf(result, jobs),
        "jobs": job_rows(result, jobs),
    }


def gather(runs: Sequence[dict]) -> list[dict]:
    """Seed runs grouped by scenario: the contract's entries (summary = mean over
    seeds, jobs = first seed's) with intervals and chart data alongside."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for run in sorted(runs, key=lambda r: r["seed"]):
        groups.setdefault((run["policy"], run["spares"]), []).append(run)
    out = []
    for (policy, spares), seeds in groups.items():
        keys = (*SUMMARY_KEYS, "makespan_s")
        values = {k: [s["summary"][k] if k in s["summary"] else s[k] for s in seeds]
                  for k in keys}
        intervals = {k: interval(v) for k, v in values.items()}
        out.append({
            "policy": policy, "spares": spares,
            "summary": {k: intervals[k]["mean"] for k in SUMMARY_KEYS},
            "jobs": seeds[0]["jobs"],
            "details": {
                "seeds": [s["seed"] for s in seeds],
                "intervals": intervals,
                "makespan_s": intervals["makespan_s"]["mean"],
                "timeouts": sum(s["timeouts"] for s in seeds) / len(seeds),
                "factor_source": seeds[0]["factor_source"],
                "series": seeds[0]["series"],
                "wait_cdf": seeds[0]["wait_cdf"],
            },
        })
    return out


def best_marks(entries: Sequence[dict]) -> dict[str, list[int]]:
    """Per summary key (and makespan), the indices of the entries with the best mean."""
    marks = {}
    for key, way in BETTER.items():
        vals = [(e["details"]["makespan_s"] if key == "makespan_s" else e["summary"][key])
                for e in entries]
        if not vals:
            continue
        best = max(vals) if way == "max" else min(vals)
        marks[key] = [i for i, v in enumerate(vals) if abs(v - best) <= 1e-9 * max(1, abs(best))]
    return marks


def run_study(jobs: Sequence[Job], topology: HyperX, scenarios: Sequence[Scenario],
              model: ModelParameters, seeds: Sequence[int],
              progress: Callable[[float], None] | None = None) -> list[dict]:
    """Every scenario and seed in this process (the command; the portal runs one
    task per scenario and seed instead)."""
    runs = []
    total = len(scenarios) * len(seeds)
    for k, (scenario, seed) in enumerate((s, z) for s in scenarios for z in seeds):
        runs.append(run_one(jobs, topology, scenario, model, seed))
        if progress is not None:
            progress((k + 1) / total)
    return gather(runs)
