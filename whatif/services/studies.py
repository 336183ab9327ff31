"""What-if studies: create (one tracked run per scenario and seed, enqueued after
commit), execute a run through the shared runner, gather the results, export."""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Sequence
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Avg, Count, Q

from allocation.hyperx import ONLINE_POLICIES
from allocation.models import Machine
from health.services.estimation import latest_estimate
from hxportal.errors import ConflictError
from hxportal.models import TERMINAL_RUN_STATUSES, RunStatus
from hxportal.runs import RunReporter, enqueue, execute
from whatif import constants
from whatif.models import WhatIfRun, WhatIfStudy
from whatif.replay import (
    IDEAL,
    SUMMARY_KEYS,
    ModelParameters,
    Scenario,
    SpareRule,
    best_marks,
    from_columns,
    gather,
    run_one,
    to_columns,
)
from whatif.replay import Job as ReplayJob
from whatif.services.workloads import machine_topology

__all__ = ["cancel_study", "create_study", "delete_study", "execute_run", "export_csv",
           "model_parameters", "progress", "results", "scenarios_of", "study_counts"]


def model_parameters(machine: Machine, *, ideal: bool = False,
                     comm_share: dict[str, float] | None = None) -> tuple[ModelParameters, str]:
    """The run-time model for ``machine`` and where its spare parameters came from."""
    if ideal:
        return IDEAL, "ideal: every adjustment off"
    estimate = latest_estimate(machine)
    if estimate is not None and estimate.alpha_abn is not None:
        params = {"p_abn": estimate.p_abn, "alpha_abn": max(1.0, estimate.alpha_abn),
                  "t_bench": estimate.t_bench}
        source = f"estimate {estimate.pk} ({estimate.benchmark or 'all benchmarks'})"
    else:
        params = {"p_abn": constants.DEFAULT_P_ABN, "alpha_abn": constants.DEFAULT_ALPHA_ABN,
                  "t_bench": constants.DEFAULT_T_BENCH}
        source = "defaults (the machine has no estimate with an abnormal run)"
    try:
        return ModelParameters(**params, comm_share=comm_share or {}), source
    except ValueError as exc:
        raise ValidationError({"model": [str(exc)]}) from exc


def scenarios_of(policies: Sequence[str], spares: Sequence[str], release: bool
                 ) -> list[Scenario]:
    """Every policy x spare rule, checked (400 naming the bad value)."""
    if not policies:
        raise ValidationError({"policies": ["name at least one policy"]})
    bad = [p for p in policies if p not in ONLINE_POLICIES]
    if bad:
        raise ValidationError({"policies": [f"unknown policy {bad[0]!r}; expected one of "
                                            f"{', '.join(ONLINE_POLICIES)}"]})
    rules = []
    for text in spares or ["none"]:
        try:
            rules.append(SpareRule.parse(text, release=release))
        except ValueError as exc:
            raise ValidationError({"spares": [str(exc)]}) from exc
    unique_p = list(dict.fromkeys(policies))
    unique_r = list({r.label: r for r in rules}.values())
    return [Scenario(p, r) for p in unique_p for r in unique_r]


def create_study(*, machine: Machine, jobs: list[ReplayJob], info: dict[str, Any],
                 source: str, policies: Sequence[str], spares: Sequence[str],
                 seeds: int = 1, ideal: bool = False, release: bool = True,
                 name: str = "", user=None,
                 comm_share: dict[str, float] | None = None) -> WhatIfStudy:
    """Store the study and one run per scenario and seed; enqueue them after commit."""
    if not 1 <= seeds <= constants.MAX_SEEDS:
        raise ValidationError({"seeds": [f"between 1 and {constants.MAX_SEEDS}"]})
    scenarios = scenarios_of(policies, spares, release)
    if len(scenarios) * seeds > constants.MAX_RUNS:
        raise ValidationError({"seeds": [
            f"{len(scenarios)} scenarios x {seeds} seeds is more than "
            f"{constants.MAX_RUNS} runs"]})
    model, model_source = model_parameters(machine, ideal=ideal, comm_share=comm_share)
    user = user if getattr(user, "is_authenticated", False) else None
    with transaction.atomic():
        study = WhatIfStudy.objects.create(
            name=name or f"{source} on {machine.name}", machine=machine, user=user,
            source=source, workload=to_columns(jobs), workload_info=info,
            policies=list(dict.fromkeys(s.policy for s in scenarios)),
            spares=list(dict.fromkeys(s.spares.label for s in scenarios)),
            release=release, seeds=seeds, ideal=ideal,
            model={**model.as_dict(), "source": model_source},
            run_count=len(scenarios) * seeds)
        runs = WhatIfRun.objects.bulk_create([
            WhatIfRun(study=study, policy=s.policy, spares=s.spares.label, seed=seed,
                      user=user, parameters={"release": release})
            for s in scenarios for seed in range(seeds)])
        for run in runs:
            enqueue(run)
    return study


def _model_of(study: WhatIfStudy) -> ModelParameters:
    m = study.model
    if study.ideal:
        return IDEAL
    return ModelParameters(p_abn=m["p_abn"], alpha_abn=m["alpha_abn"], t_bench=m["t_bench"],
                           comm_share=m.get("comm_share") or {})


def replay_work(run: WhatIfRun, reporter: RunReporter) -> dict[str, Any]:
    """The work of one run (outside any transaction)."""
    study = WhatIfStudy.objects.select_related("machine").get(pk=run.study_id)
    jobs = from_columns(study.workload)
    rule = SpareRule.parse(run.spares, release=study.release)
    reporter.log(f"replaying {len(jobs):,} jobs: {run.policy}, spares {run.spares}, "
                 f"seed {run.seed} (attempt {run.attempts})")
    result = run_one(jobs, machine_topology(study.machine), Scenario(run.policy, rule),
                     _model_of(study), int(run.seed or 0), progress=reporter.progress)
    reporter.log(f"done: mean wait {result['summary']['mean_wait_s']:.0f} s, utilisation "
                 f"{result['summary']['utilisation']:.3f}")
    return result


def _keep_jobs_apart(run: WhatIfRun) -> None:
    """Move the job list out of the stored result (inside the storing transaction)."""
    result = dict(run.result or {})
    run.jobs = result.pop("jobs", None)
    run.result = result
    run.save(update_fields=["jobs", "result"])


def execute_run(run_id: int) -> str | None:
    """What the Celery task does: claim, replay, store once (redelivery-safe)."""
    return execute(WhatIfRun, run_id, replay_work, on_success=_keep_jobs_apart)


def study_counts(study: WhatIfStudy) -> dict[str, int]:
    rows = study.runs.values("status").annotate(n=Count("id")).order_by()
    return {r["status"]: r["n"] for r in rows}


def progress(study: WhatIfStudy) -> dict[str, Any]:
    """Runs per status, the overall fraction done and the study status."""
    counts = study_counts(study)
    mean = study.runs.aggregate(p=Avg("progress"))["p"] or 0.0
    return {"status": str(WhatIfStudy.derive_status(counts)), "runs": counts,
            "total": sum(counts.values()), "fraction": round(float(mean), 4)}


def results(study: WhatIfStudy, *, with_jobs: bool = True) -> dict[str, Any]:
    """The contract's shape for the runs that succeeded: ``scenarios`` (policy,
    spares, summary, jobs), with intervals and chart data in ``details`` and the
    best entry per summary key in ``best``."""
    fields = ("result", "jobs") if with_jobs else ("result",)
    runs = [{**r.result, "jobs": r.jobs if with_jobs else []}
            for r in study.runs.filter(status=RunStatus.SUCCEEDED)
            .order_by("policy", "spares", "seed").only(*fields) if r.result]
    entries = gather(runs)
    details = [e.pop("details") for e in entries]
    if not with_jobs:
        for e in entries:
            e.pop("jobs")
    return {"machine": study.machine.name, "format": study.source, "seeds": study.seeds,
            "ideal": study.ideal, "release": study.release,
            "left_out": study.workload_info.get("left_out", 0),
            "skipped": study.workload_info.get("skipped", {}),
            "model": study.model, "progress": progress(study),
            "scenarios": entries, "details": details, "best": best_marks(
                [{**e, "details": d} for e, d in zip(entries, details, strict=True)])}


def export_csv(study: WhatIfStudy) -> str:
    """One row per scenario: the summary means and their interval bounds."""
    data = results(study, with_jobs=False)
    out = io.StringIO()
    writer = csv.writer(out)
    keys = [*SUMMARY_KEYS, "makespan_s"]
    writer.writerow(["policy", "spares", "seeds"]
                    + [f"{k}{part}" for k in keys for part in ("", "_low", "_high")])
    for entry, detail in zip(data["scenarios"], data["details"], strict=True):
        row = [entry["policy"], entry["spares"], len(detail["seeds"])]
        for k in keys:
            iv = detail["intervals"][k]
            row += [f"{iv['mean']:.6g}", f"{iv['low']:.6g}", f"{iv['high']:.6g}"]
        writer.writerow(row)
    return out.getvalue()


def cancel_study(study: WhatIfStudy) -> int:
    """Cancel the runs not finished yet; a worker finishing later stores nothing."""
    with transaction.atomic():
        open_runs = study.runs.select_for_update().exclude(status__in=TERMINAL_RUN_STATUSES)
        return open_runs.update(status=RunStatus.CANCELLED, error="cancelled")


def delete_study(study: WhatIfStudy) -> None:
    """Delete a study whose runs are all finished (cancel it first otherwise)."""
    if study.runs.exclude(status__in=TERMINAL_RUN_STATUSES).exists():
        raise ConflictError(f"study {study.pk} has runs not finished; cancel it first",
                            field="status")
    study.delete()


def status_counts_by_study(studies) -> dict[int, Counter]:
    rows = (WhatIfRun.objects.filter(study__in=studies).values("study_id", "status")
            .annotate(n=Count("id")).order_by())
    out: dict[int, Counter] = {}
    for r in rows:
        out.setdefault(r["study_id"], Counter())[r["status"]] = r["n"]
    return out


def with_counts(queryset):
    return queryset.annotate(
        runs_done=Count("runs", filter=Q(runs__status=RunStatus.SUCCEEDED)),
        runs_total=Count("runs"))
