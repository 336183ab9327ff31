"""Estimation runs: ``p_abn``, ``alpha_abn`` and ``t_bench`` of a machine from its window
of benchmark results, computed by a Celery task and stored as :class:`Estimate` rows."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from allocation.models import Machine
from health import maths
from health.constants import DEFAULT_WINDOW_DAYS
from health.models import BenchmarkResult, Estimate, EstimationRun
from health.services.parsing import ParsedRow, check_benchmark
from health.services.window import check_window, window_runs
from hxportal.runs import RunReporter, enqueue


def start_estimation(machine: Machine, *, window_days: int = DEFAULT_WINDOW_DAYS,
                     benchmark: str = "", user=None) -> EstimationRun:
    """Create an estimation run and enqueue it once the row is committed."""

    window = check_window(window_days)
    if benchmark and (problem := check_benchmark(benchmark)):
        raise ValidationError({"benchmark": [problem]})
    with transaction.atomic():
        run = EstimationRun.objects.create(
            machine=machine, benchmark=benchmark, window_days=window,
            user=user if getattr(user, "is_authenticated", False) else None,
            parameters={"machine": machine.name, "benchmark": benchmark,
                        "window_days": window})
        enqueue(run)
    return run


def start_all_estimations(window_days: int = DEFAULT_WINDOW_DAYS) -> list[EstimationRun]:
    """One estimation run per machine with results in the window (the beat entry)."""
    since = timezone.now() - timedelta(days=check_window(window_days))
    machine_ids = (BenchmarkResult.objects.filter(measured_at__gte=since)
                   .values_list("machine_id", flat=True).distinct())
    return [start_estimation(machine, window_days=window_days)
            for machine in Machine.objects.filter(pk__in=list(machine_ids)).order_by("name")]


def estimate_work(run: EstimationRun, reporter: RunReporter) -> dict[str, Any]:
    """Estimate every benchmark of the run's window; stored by :func:`store_estimates`."""
    end = timezone.now()
    start = end - timedelta(days=run.window_days)
    rows = window_runs(run.machine_id, run.benchmark, start, end)
    reporter.log(f"{len(rows)} node-runs between {start:%Y-%m-%d %H:%M} and "
                 f"{end:%Y-%m-%d %H:%M} UTC")
    by_benchmark: dict[str, list[tuple]] = defaultdict(list)
    for row in rows:
        by_benchmark[row[2]].append(row)
    estimates = []
    for i, (name, runs) in enumerate(sorted(by_benchmark.items())):
        try:
            est = maths.estimate(runs, benchmark=name)
        except ValueError as exc:
            reporter.log(f"{name}: skipped ({exc})")
        else:
            estimates.append(est.as_dict())
            alpha = "none" if est.alpha_abn is None else f"{est.alpha_abn:.3g}"
            reporter.log(f"{name}: {est.runs} runs, {est.abnormal_runs} abnormal, "
                         f"p_abn={est.p_abn:.4g}, alpha_abn={alpha}, "
                         f"t_bench={est.t_bench:.4g} s")
        reporter.progress((i + 1) / len(by_benchmark))
    if not by_benchmark:
        reporter.log("no benchmark results in the window; nothing estimated")
    return {"window_start": start.isoformat(), "window_end": end.isoformat(),
            "estimates": estimates}


def store_estimates(run: EstimationRun) -> None:
    """Store the run's estimates (inside the transaction that marks it succeeded); a
    result stored before alpha_abn had an interval stores none."""
    result = run.result or {}
    start = datetime.fromisoformat(result["window_start"])
    end = datetime.fromisoformat(result["window_end"])
    Estimate.objects.filter(run=run).delete()
    Estimate.objects.bulk_create(
        Estimate(machine_id=run.machine_id, benchmark=e["benchmark"], window_start=start,
                 window_end=end, runs=e["runs"], abnormal_runs=e["abnormal_runs"],
                 jobs=e["jobs"], nodes=e["nodes"], t_bench=e["t_bench"],
                 alpha_abn=e["alpha_abn"],
                 alpha_abn_low=(e.get("alpha_abn_interval") or (None, None))[0],
                 alpha_abn_high=(e.get("alpha_abn_interval") or (None, None))[1],
                 p_abn=e["p_abn"],
                 p_abn_low=e["p_abn_interval"][0], p_abn_high=e["p_abn_interval"][1],
                 confidence=e["confidence"], rule=e["rule"], run=run, created_at=end)
        for e in result.get("estimates", []))


def estimate_history(rows: Iterable[ParsedRow], benchmark: str | None = None
                     ) -> dict[str, dict[str, Any]]:
    """Offline estimates per benchmark from parsed rows (no database); a health round's
    rows (a machine, no job) are one round per machine, as an upload is."""
    runs = [(str(r.job) if r.job is not None else f"round {r.machine}", r.node, r.benchmark,
             r.seconds) for r in rows]
    names = sorted({r[2] for r in runs})
    if benchmark is not None:
        if benchmark not in names:
            raise ValidationError({"benchmark": [
                f"{benchmark!r} is not in the input (have: {', '.join(names)})"]})
        names = [benchmark]
    out = {}
    for name in names:
        try:
            out[name] = maths.estimate(runs, benchmark=name).as_dict()
        except ValueError as exc:
            raise ValidationError({"benchmark": [f"{name}: {exc}"]}) from exc
    return out


#: "The machine's latest estimate, read when needed" (see ``recommend``'s ``estimate``).
LATEST = object()


def estimate_of(machine: Machine, pk: int | None) -> Estimate | None:
    """The machine's estimate ``pk`` (the one a recommendation was asked under), or None."""
    return None if pk is None else Estimate.objects.filter(machine=machine, pk=pk).first()


def latest_estimate(machine: Machine, benchmark: str = "") -> Estimate | None:
    """The machine's newest estimate (of ``benchmark`` when given), or None."""
    query = Estimate.objects.filter(machine=machine)
    if benchmark:
        query = query.filter(benchmark=benchmark)
    return query.order_by("-created_at", "-id").first()
