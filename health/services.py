"""The write path for node health: estimation runs, spares, selection, drains.

A services module split by topic from ``allocation.services.machines`` (which it calls
for hostlists and node states); benchmark ingestion lives in
:mod:`health.ingest` and is re-exported here. Views, the API, commands and
tasks call these functions; the maths lives in the pure core
:mod:`health.spares`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import OuterRef, Q, Subquery
from django.utils import timezone

from allocation.models import Allocation, AllocationRole, Job, Machine, Node, NodeState
from allocation.services import machines
from health import spares
from health.constants import DEFAULT_WINDOW_DAYS, MAX_WINDOW_DAYS
from health.ingest import (  # noqa: F401 - re-exported for callers of the write path
    MAX_ROWS,
    ErrorCollector,
    IngestResult,
    ParsedRow,
    check_benchmark,
    check_node,
    check_seconds,
    check_units,
    compress_names,
    ingest,
    ingest_csv,
    ingest_payload,
    parse_csv,
    parse_payload,
    resolve_job,
)
from health.models import BenchmarkResult, Estimate, EstimationRun
from hxportal import hostlists, ownership
from hxportal.runs import RunReporter, enqueue

MAX_CURVE_POINTS = 2000
MAX_N_NODE = 1_048_576
#: The drain rule of :func:`spares.node_suspicion`: a node is a drain candidate when
#: P[p_i > DRAIN_FACTOR * fleet p] >= DRAIN_PROBABILITY (its suspicion *score*).
DRAIN_FACTOR = spares.DEFAULT_DRAIN_FACTOR
DRAIN_PROBABILITY = spares.DEFAULT_DRAIN_PROBABILITY

# --------------------------------------------------------------------------
# Estimation runs


def _check_window(window_days: Any) -> int:
    if isinstance(window_days, bool) or not isinstance(window_days, int) or not (
            1 <= window_days <= MAX_WINDOW_DAYS):
        raise ValidationError({"window_days": [f"must be an integer in 1..{MAX_WINDOW_DAYS}"]})
    return window_days


def start_estimation(machine: Machine, *, window_days: int = DEFAULT_WINDOW_DAYS,
                     benchmark: str = "", user=None) -> EstimationRun:
    """Create an estimation run and enqueue it once the row is committed."""

    window = _check_window(window_days)
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
    since = timezone.now() - timedelta(days=_check_window(window_days))
    machine_ids = (BenchmarkResult.objects.filter(measured_at__gte=since)
                   .values_list("machine_id", flat=True).distinct())
    return [start_estimation(machine, window_days=window_days)
            for machine in Machine.objects.filter(pk__in=list(machine_ids)).order_by("name")]


def _window_runs(machine_id: int, benchmark: str, start: datetime,
                 end: datetime) -> list[tuple[str, str, str, float]]:
    query = BenchmarkResult.objects.filter(machine_id=machine_id, measured_at__gte=start,
                                           measured_at__lte=end)
    if benchmark:
        query = query.filter(benchmark=benchmark)
    return [(str(job), host, bench, seconds) for job, host, bench, seconds in
            query.order_by("measured_at", "id").values_list(
                "job_id", "node__hostname", "benchmark", "seconds")]


def estimate_work(run: EstimationRun, reporter: RunReporter) -> dict[str, Any]:
    """Estimate every benchmark of the run's window; stored by :func:`store_estimates`."""
    end = timezone.now()
    start = end - timedelta(days=run.window_days)
    rows = _window_runs(run.machine_id, run.benchmark, start, end)
    reporter.log(f"{len(rows)} node-runs between {start:%Y-%m-%d %H:%M} and "
                 f"{end:%Y-%m-%d %H:%M} UTC")
    by_benchmark: dict[str, list[tuple]] = defaultdict(list)
    for row in rows:
        by_benchmark[row[2]].append(row)
    estimates = []
    for i, (name, runs) in enumerate(sorted(by_benchmark.items())):
        try:
            est = spares.estimate(runs, benchmark=name)
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
    """Store the run's estimates (inside the transaction that marks it succeeded)."""
    result = run.result or {}
    start = datetime.fromisoformat(result["window_start"])
    end = datetime.fromisoformat(result["window_end"])
    Estimate.objects.filter(run=run).delete()
    Estimate.objects.bulk_create(
        Estimate(machine_id=run.machine_id, benchmark=e["benchmark"], window_start=start,
                 window_end=end, runs=e["runs"], abnormal_runs=e["abnormal_runs"],
                 jobs=e["jobs"], nodes=e["nodes"], t_bench=e["t_bench"],
                 alpha_abn=e["alpha_abn"], p_abn=e["p_abn"],
                 p_abn_low=e["p_abn_interval"][0], p_abn_high=e["p_abn_interval"][1],
                 confidence=e["confidence"], rule=e["rule"], run=run, created_at=end)
        for e in result.get("estimates", []))


def estimate_history(rows: Iterable[ParsedRow], benchmark: str | None = None
                     ) -> dict[str, dict[str, Any]]:
    """Offline estimates per benchmark from parsed rows (no database)."""
    runs = [(str(r.job), r.node, r.benchmark, r.seconds) for r in rows]
    names = sorted({r[2] for r in runs})
    if benchmark is not None:
        if benchmark not in names:
            raise ValidationError({"benchmark": [
                f"{benchmark!r} is not in the input (have: {', '.join(names)})"]})
        names = [benchmark]
    out = {}
    for name in names:
        try:
            out[name] = spares.estimate(runs, benchmark=name).as_dict()
        except ValueError as exc:
            raise ValidationError({"benchmark": [f"{name}: {exc}"]}) from exc
    return out


def latest_estimate(machine: Machine, benchmark: str = "") -> Estimate | None:
    query = Estimate.objects.filter(machine=machine)
    if benchmark:
        query = query.filter(benchmark=benchmark)
    return query.order_by("-created_at", "-id").first()


# --------------------------------------------------------------------------
# Spare recommendation


_SPARE_FIELDS = {"n_node", "n_spare", "p_abn", "alpha_abn", "t_bench", "t_cmpt", "t_comm",
                 "wall_time", "compute_fraction", "max_curve_points"}


def _core_error(exc: ValueError) -> ValidationError:
    message = str(exc)
    first = message.split(" ", 1)[0]
    if first == "alpha_abn" or first in _SPARE_FIELDS:
        return ValidationError({first: [message]})
    return ValidationError({"non_field_errors": [message]})


def recommend(*, n_node: int, t_cmpt: float | None = None, t_comm: float | None = None,
              wall_time: float | None = None, compute_fraction: float | None = None,
              machine: Machine | None = None, benchmark: str = "",
              p_abn: float | None = None, alpha_abn: float | None = None,
              t_bench: float | None = None, per_node: bool = False,
              max_curve_points: int = MAX_CURVE_POINTS) -> dict[str, Any]:
    """The spare recommendation, with parameters given or from the machine's latest estimate.

    Give ``t_cmpt`` (and optionally ``t_comm``, default 0) or ``wall_time`` (and
    optionally ``compute_fraction``, default ``DEFAULT_COMPUTE_FRACTION``).
    Parameters not given explicitly come from the latest estimate of ``machine``
    (of ``benchmark`` when given). The curve holds at most ``max_curve_points``.

    ``per_node``: every free node of ``machine`` (up, not allocated) gets its own
    ``p_i``, the posterior mean from its benchmark history (nodes without
    history get ``p_abn``); the least suspicious nodes are chosen first and the
    answer names them (``chosen``, a hostlist of ``n_total`` nodes).
    """
    if per_node and machine is None:
        raise ValidationError({"per_node": ["needs a machine"]})
    if isinstance(n_node, bool) or not isinstance(n_node, int) or not 1 <= n_node <= MAX_N_NODE:
        raise ValidationError({"n_node": [f"must be an integer in 1..{MAX_N_NODE}"]})
    if wall_time is not None and (t_cmpt is not None or t_comm is not None):
        raise ValidationError({"wall_time": ["give either wall_time or t_cmpt/t_comm"]})
    if wall_time is None and t_cmpt is None:
        raise ValidationError({"t_cmpt": ["give t_cmpt (and t_comm) or wall_time"]})
    if compute_fraction is not None and wall_time is None:
        raise ValidationError({"compute_fraction": ["only applies with wall_time"]})
    try:
        if wall_time is not None:
            fraction = (spares.DEFAULT_COMPUTE_FRACTION if compute_fraction is None
                        else compute_fraction)
            t_cmpt, t_comm = spares.t_cmpt_from_wall(wall_time, fraction), 0.0
        t_comm = 0.0 if t_comm is None else t_comm
    except ValueError as exc:
        raise _core_error(exc) from exc
    given = {"p_abn": p_abn, "alpha_abn": alpha_abn, "t_bench": t_bench}
    missing = [name for name, value in given.items() if value is None]
    estimate = None
    if missing:
        if machine is None:
            raise ValidationError({name: ["give it, or a machine with a stored estimate"]
                                   for name in missing})
        estimate = latest_estimate(machine, benchmark)
        if estimate is None:
            raise ValidationError({"machine": [
                f"machine {machine.name} has no estimate"
                + (f" for benchmark {benchmark!r}" if benchmark else "")
                + f"; run an estimation or give {', '.join(missing)}"]})
        for name in missing:
            given[name] = getattr(estimate, name)
        if given["alpha_abn"] is None:
            raise ValidationError({"alpha_abn": [
                "the latest estimate saw no abnormal run, so it has no alpha_abn; give one"]})
    chosen = None
    try:
        params = spares.SpareParameters(**given)
        if per_node:
            names, node_p = _free_node_probabilities(
                machine, estimate.benchmark if estimate else benchmark, params.p_abn)
            if len(names) < n_node:
                raise ValidationError({"n_node": [
                    f"machine {machine.name} has only {len(names)} free nodes"]})
            rec = spares.recommend_spares_for_nodes(
                node_p, n_node, params.alpha_abn, params.t_bench, t_cmpt=t_cmpt,
                t_comm=t_comm, max_curve_points=max_curve_points)
            chosen = compress_names([names[i] for i in rec.chosen or ()])
        else:
            rec = spares.recommend_spares(n_node, params, t_cmpt=t_cmpt, t_comm=t_comm,
                                          max_curve_points=max_curve_points)
    except ValueError as exc:
        raise _core_error(exc) from exc
    out = rec.as_dict()
    out.pop("chosen", None)
    last = rec.curve_n_spare[-1] if rec.curve_n_spare else n_node
    evaluated = last + 1
    out.update(
        per_node=per_node, chosen=chosen,
        curve_points=len(rec.curve_n_spare),
        curve_downsampled=len(rec.curve_n_spare) < evaluated,
        curve_note=(f"every N_spare from 0 to {last}" if len(rec.curve_n_spare) == evaluated
                    else f"downsampled to {len(rec.curve_n_spare)} evenly spread points of "
                         f"0..{last} (the optimum is exact and always included)"),
        parameters_source="explicit" if estimate is None else (
            "estimate" if len(missing) == 3 else "estimate+explicit"),
        estimate=None if estimate is None else {
            "id": estimate.pk, "machine": machine.name, "benchmark": estimate.benchmark,
            "created_at": estimate.created_at.isoformat(), "runs": estimate.runs,
            "window_start": estimate.window_start.isoformat(),
            "window_end": estimate.window_end.isoformat()},
    )
    return out


def _free_node_probabilities(machine: Machine, benchmark: str, default_p: float
                             ) -> tuple[list[str], list[float]]:
    """Hostnames of the machine's free nodes and each one's posterior ``p_i``."""
    # Not ``exclude(allocations__released_at__isnull=True)``: through the LEFT
    # JOIN that also drops nodes that never had an allocation.
    held = Allocation.objects.filter(node__machine=machine, released_at__isnull=True)
    names = list(Node.objects.filter(machine=machine, state=NodeState.UP)
                 .exclude(pk__in=held.values("node_id"))
                 .order_by("index").values_list("hostname", flat=True))
    posterior = {s.node: s.p_posterior
                 for s in machine_health(machine, benchmark).suspicion}
    return names, [posterior.get(name, default_p) for name in names]


# --------------------------------------------------------------------------
# Selecting the fastest nodes of a job


def select_fastest(*, n_node: int | None = None, times: dict[str, Any] | None = None,
                   job: Job | None = None, benchmark: str = "",
                   abnormal_threshold: float | None = None) -> dict[str, Any]:
    """Keep the ``n_node`` fastest nodes from given times or a job's stored results."""
    if (times is None) == (job is None):
        raise ValidationError({"times": ["give either times or a job"]})
    if job is not None:
        names = sorted(set(job.benchmark_results.values_list("benchmark", flat=True)))
        if not names:
            raise ValidationError({"job": [f"job {job.pk} has no stored benchmark results"]})
        if not benchmark:
            if len(names) > 1:
                raise ValidationError({"benchmark": [
                    f"job {job.pk} has several benchmarks ({', '.join(names)}); name one"]})
            benchmark = names[0]
        elif benchmark not in names:
            raise ValidationError({"benchmark": [
                f"job {job.pk} has no {benchmark!r} results (has: {', '.join(names)})"]})
        times = dict(job.benchmark_results.filter(benchmark=benchmark)
                     .values_list("node__hostname", "seconds"))
        n_node = job.node_count if n_node is None else n_node
    if not isinstance(times, dict) or not times:
        raise ValidationError({"times": ["must be a non-empty object {node: seconds}"]})
    errors = ErrorCollector()
    for name, value in times.items():
        if problem := check_node(name):
            errors.add(f"times.{name}"[:80], problem)
        _, problem = check_seconds(value)
        if problem:
            errors.add(f"times.{name}"[:80], problem)
    errors.raise_if_any()
    if n_node is None:
        raise ValidationError({"n_node": ["is required with times"]})
    if isinstance(n_node, bool) or not isinstance(n_node, int) or not 1 <= n_node <= len(times):
        raise ValidationError({"n_node": [f"must be an integer in 1..{len(times)} "
                                          "(the number of nodes with times)"]})
    try:
        sel = spares.select_fastest(times, n_node, abnormal_threshold)
    except ValueError as exc:
        raise ValidationError({"abnormal_threshold": [str(exc)]}) from exc
    return {
        "job": None if job is None else job.pk, "benchmark": benchmark or None,
        "n_node": n_node, "n_spare": len(sel.dropped),
        "keep": hostlists.compress(sel.keep), "dropped": hostlists.compress(sel.dropped),
        "abnormal": hostlists.compress(sel.abnormal),
        "abnormal_kept": hostlists.compress(sel.abnormal_kept),
        "median": sel.median, "ratio_threshold": sel.ratio_threshold, "rule": sel.rule,
    }


def job_benchmarks(job: Job) -> list[str]:
    """The benchmarks the job has stored results for (what select-fastest can use)."""
    return sorted(set(job.benchmark_results.values_list("benchmark", flat=True)))


def job_times(job: Job, benchmark: str) -> list[tuple[str, float]]:
    """(hostname, seconds) of the job's stored results of one benchmark, fastest first."""
    return list(job.benchmark_results.filter(benchmark=benchmark)
                .order_by("seconds", "node__index").values_list("node__hostname", "seconds"))


@transaction.atomic
def record_selection(job: Job, keep: str, dropped: str) -> dict[str, int]:
    """Mark the job's active allocations: kept nodes primary, dropped nodes excluded."""
    kept_names, dropped_names = set(hostlists.expand(keep)), set(hostlists.expand(dropped))
    active = Allocation.objects.select_for_update().filter(
        job=job, released_at__isnull=True).select_related("node")
    counts = {AllocationRole.PRIMARY: 0, AllocationRole.EXCLUDED: 0}
    for allocation in active:
        host = allocation.node.hostname
        role = (AllocationRole.PRIMARY if host in kept_names else
                AllocationRole.EXCLUDED if host in dropped_names else None)
        if role is not None and allocation.role != role:
            allocation.role = role
            allocation.save(update_fields=["role"])
        if role is not None:
            counts[role] += 1
    return {"primary": counts[AllocationRole.PRIMARY],
            "excluded": counts[AllocationRole.EXCLUDED]}


# --------------------------------------------------------------------------
# Per-node health and drains


@dataclass
class MachineHealth:
    """What the health page and API show for one machine and benchmark."""

    machine: Machine
    benchmark: str
    benchmarks: list[str]
    window_days: int
    window_start: datetime
    runs: int
    ratio_threshold: float | None
    suspicion: list[spares.NodeSuspicion]
    latest: dict[str, tuple[float, bool, float]]  # node -> (seconds, abnormal, ratio)
    rule: dict[str, Any] = field(default_factory=dict)

    @property
    def by_node(self) -> dict[str, spares.NodeSuspicion]:
        return {s.node: s for s in self.suspicion}

    @property
    def candidates(self) -> list[spares.NodeSuspicion]:
        return [s for s in self.suspicion if s.drain_candidate]


def suspicion_level(item: spares.NodeSuspicion | None) -> str:
    """A colour class: nodata, ok, watch (some abnormal runs) or suspect (drain candidate)."""
    if item is None:
        return "nodata"
    if item.drain_candidate:
        return "suspect"
    return "watch" if item.abnormal_runs else "ok"


def benchmarks_of(machine: Machine) -> list[str]:
    return sorted(set(BenchmarkResult.objects.filter(machine=machine)
                      .values_list("benchmark", flat=True).distinct()))


def machine_health(machine: Machine, benchmark: str = "",
                   window_days: int = DEFAULT_WINDOW_DAYS, reader: Any = None) -> MachineHealth:
    """Classify the window's node-runs of one benchmark and rank the nodes by suspicion;
    evidence naming jobs that ``reader`` may not read (``HX_PRIVATE_DATA``) says
    "private" instead of the job id."""
    window = _check_window(window_days)
    names = benchmarks_of(machine)
    if benchmark and benchmark not in names:
        raise ValidationError({"benchmark": [f"machine {machine.name} has no {benchmark!r} "
                                             "results"]})
    if not benchmark and names:
        latest = (BenchmarkResult.objects.filter(machine=machine)
                  .order_by("-measured_at", "-id").values_list("benchmark", flat=True).first())
        benchmark = latest or names[0]
    end = timezone.now()
    start = end - timedelta(days=window)
    runs = _window_runs(machine.pk, benchmark, start, end) if benchmark else []
    return _classified(machine, benchmark, names, window, start, runs, reader)


def _classified(machine: Machine, benchmark: str, names: list[str], window: int,
                start: datetime, runs: list[tuple[str, str, str, float]],
                reader: Any = None) -> MachineHealth:
    """Classify one machine's window of one benchmark (runs oldest first)."""
    if not runs:
        return MachineHealth(machine, benchmark, names, window, start, 0, None, [], {})
    result = spares.classify(runs)
    suspicion = spares.node_suspicion(runs, result.flags, result.ratios)
    if reader is not None and not ownership.reads_everything(reader):
        suspicion = _mask_evidence(suspicion, reader)
    latest: dict[str, tuple[float, bool, float]] = {}
    for (_, host, _, seconds), flag, ratio in zip(runs, result.flags.tolist(),
                                                  result.ratios.tolist(), strict=True):
        latest[host] = (seconds, flag, ratio)  # runs are oldest first: the last one wins
    threshold = result.rule["thresholds"][benchmark]["ratio_threshold"]
    return MachineHealth(machine, benchmark, names, window, start, len(runs), threshold,
                         suspicion, latest, result.rule)


def machines_health(machines: Iterable[Machine], window_days: int = DEFAULT_WINDOW_DAYS
                    ) -> dict[int, MachineHealth]:
    """:func:`machine_health` of several machines (each on its latest benchmark, as the
    health page opens) in two queries in all, for overviews. Evidence is not masked:
    callers show counts and node names, not the jobs cited."""
    window = _check_window(window_days)
    machines = list(machines)
    if not machines:
        return {}
    latest = (BenchmarkResult.objects.filter(machine=OuterRef("pk"))
              .order_by("-measured_at", "-id").values("benchmark")[:1])
    benchmark_of = dict(Machine.objects.filter(pk__in=[m.pk for m in machines])
                        .annotate(latest_benchmark=Subquery(latest))
                        .values_list("pk", "latest_benchmark"))
    end = timezone.now()
    start = end - timedelta(days=window)
    wanted = Q(pk__in=[])
    for machine_id, benchmark in benchmark_of.items():
        if benchmark:
            wanted |= Q(machine_id=machine_id, benchmark=benchmark)
    runs: dict[int, list[tuple[str, str, str, float]]] = defaultdict(list)
    for machine_id, job, host, bench, secs in (
            BenchmarkResult.objects.filter(wanted, measured_at__gte=start, measured_at__lte=end)
            .order_by("measured_at", "id")
            .values_list("machine_id", "job_id", "node__hostname", "benchmark", "seconds")):
        runs[machine_id].append((str(job), host, bench, secs))
    out = {}
    for m in machines:
        benchmark = benchmark_of.get(m.pk) or ""
        try:
            out[m.pk] = _classified(m, benchmark, [], window, start, runs.get(m.pk, []))
        except ValueError:  # an overview shows the other machines; the health page says why
            out[m.pk] = _classified(m, benchmark, [], window, start, [])
    return out


def _mask_evidence(suspicion: list[spares.NodeSuspicion],
                   reader: Any) -> list[spares.NodeSuspicion]:
    cited = {int(key) for item in suspicion for key in item.evidence}
    own = {str(pk) for pk in Job.objects.filter(owner=reader, pk__in=cited)
           .values_list("pk", flat=True)}
    return [replace(item, evidence=tuple(
        key if key in own else "private" for key in item.evidence)) for item in suspicion]


def node_history(node: Node, benchmark: str = "", limit: int = 200,
                 reader: Any = None) -> list[dict[str, Any]]:
    """The node's latest results, newest first, with the job median for context;
    jobs that ``reader`` may not read (``HX_PRIVATE_DATA``) are not named."""
    private = reader is not None and not ownership.reads_everything(reader)
    query = node.benchmark_results.select_related("job")
    if benchmark:
        query = query.filter(benchmark=benchmark)
    results = list(query.order_by("-measured_at", "-id")[:limit])
    medians: dict[tuple[int, str], float] = {}
    pairs = {(r.job_id, r.benchmark) for r in results}
    for job_id, name in pairs:
        values = sorted(BenchmarkResult.objects.filter(job_id=job_id, benchmark=name)
                        .values_list("seconds", flat=True))
        m = len(values)
        medians[(job_id, name)] = 0.5 * (values[(m - 1) // 2] + values[m // 2])
    hidden = {r.job_id for r in results if private and r.job.owner_id != reader.pk}
    return [{"job": None if r.job_id in hidden else r.job_id,
             "job_name": "another user's job" if r.job_id in hidden else r.job.name,
             "external_id": "" if r.job_id in hidden else r.job.external_id,
             "benchmark": r.benchmark, "seconds": r.seconds, "measured_at": r.measured_at,
             "job_median": medians[(r.job_id, r.benchmark)],
             "ratio": r.seconds / medians[(r.job_id, r.benchmark)]} for r in results]


def drain_reason(item: spares.NodeSuspicion) -> str:
    return (f"suspicion: {item.abnormal_runs}/{item.runs} runs abnormal "
            f"(score {item.score:.2f})")[:255]


def drain_suspect_preview(machine: Machine, hostname: str, benchmark: str = "",
                          window_days: int = DEFAULT_WINDOW_DAYS) -> tuple[Node, str]:
    """What :func:`drain_suspect` would do, nothing written: the node and its reason."""
    health = machine_health(machine, benchmark, window_days)
    item = health.by_node.get(hostname)
    if item is None or not item.abnormal_runs:
        raise ValidationError({"hostname": [
            f"{hostname} has no abnormal {health.benchmark or 'benchmark'} runs in the last "
            f"{health.window_days} days; drain it from the node page with your own reason"]})
    reason = drain_reason(item)
    nodes = machines.check_node_state(machine, hostname, NodeState.DRAINED, reason)
    return nodes[0], reason


def drain_suspect(machine: Machine, hostname: str, benchmark: str = "",
                  window_days: int = DEFAULT_WINDOW_DAYS) -> tuple[Node, str]:
    """Drain one node because of its benchmark history; the reason quotes the evidence."""
    _, reason = drain_suspect_preview(machine, hostname, benchmark, window_days)
    nodes = machines.set_node_state(machine, hostname, NodeState.DRAINED, reason)
    return nodes[0], reason
