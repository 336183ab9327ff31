"""A what-if study run in this process, without rows: the command's path."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from allocation.models import Machine
from whatif.replay import Job, best_marks, run_study
from whatif.services.studies import model_parameters, scenarios_of
from whatif.services.workloads import machine_topology


def run_inline(machine: Machine, jobs: list[Job], info: dict[str, Any], *, fmt: str,
               policies: Sequence[str], spares: Sequence[str], seeds: int = 1,
               ideal: bool = False, release: bool = True) -> dict[str, Any]:
    """The contract's JSON: ``scenarios`` (policy, spares, summary, jobs) and, beside
    it, what the contract leaves to us (intervals, charts, model, counts)."""
    scenarios = scenarios_of(policies, spares, release)
    model, source = model_parameters(machine, ideal=ideal)
    entries = run_study(jobs, machine_topology(machine), scenarios, model, range(seeds))
    details = [e.pop("details") for e in entries]
    return {"machine": machine.name, "format": fmt, "seeds": seeds, "ideal": ideal,
            "release": release, "left_out": info["left_out"], "skipped": info["skipped"],
            "model": {**model.as_dict(), "source": source},
            "scenarios": entries, "details": details,
            "best": best_marks([{**e, "details": d}
                                for e, d in zip(entries, details, strict=True)])}
