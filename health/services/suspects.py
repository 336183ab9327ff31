"""Per-node health: which nodes of a machine are abnormal again and again, each node's
history, and draining a suspect with the evidence as its reason."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import OuterRef, Q, Subquery
from django.utils import timezone

from allocation.models import Job, Machine, Node, NodeState
from allocation.services import machines as machine_services
from health import spares
from health.constants import DEFAULT_WINDOW_DAYS
from health.models import BenchmarkResult
from health.services.window import check_window, window_runs
from hxportal import ownership

#: The drain rule of :func:`spares.node_suspicion`: a node is a drain candidate when
#: P[p_i > DRAIN_FACTOR * fleet p] >= DRAIN_PROBABILITY (its suspicion *score*).
DRAIN_FACTOR = spares.DEFAULT_DRAIN_FACTOR
DRAIN_PROBABILITY = spares.DEFAULT_DRAIN_PROBABILITY


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
    """The benchmarks the machine has results of, sorted."""
    return sorted(set(BenchmarkResult.objects.filter(machine=machine)
                      .values_list("benchmark", flat=True).distinct()))


def machine_health(machine: Machine, benchmark: str = "",
                   window_days: int = DEFAULT_WINDOW_DAYS, reader: Any = None) -> MachineHealth:
    """Classify the window's node-runs of one benchmark and rank the nodes by suspicion;
    evidence naming jobs that ``reader`` may not read (``HX_PRIVATE_DATA``) says
    "private" instead of the job id."""
    window = check_window(window_days)
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
    runs = window_runs(machine.pk, benchmark, start, end) if benchmark else []
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
    window = check_window(window_days)
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
    medians = {(job_id, name): spares.median(
                   BenchmarkResult.objects.filter(job_id=job_id, benchmark=name)
                   .values_list("seconds", flat=True))
               for job_id, name in {(r.job_id, r.benchmark) for r in results}}
    hidden = {r.job_id for r in results if private and r.job.owner_id != reader.pk}
    return [{"job": None if r.job_id in hidden else r.job_id,
             "job_name": "another user's job" if r.job_id in hidden else r.job.name,
             "external_id": "" if r.job_id in hidden else r.job.external_id,
             "benchmark": r.benchmark, "seconds": r.seconds, "measured_at": r.measured_at,
             "job_median": medians[(r.job_id, r.benchmark)],
             "ratio": r.seconds / medians[(r.job_id, r.benchmark)]} for r in results]


def drain_reason(item: spares.NodeSuspicion) -> str:
    """The node-state reason a drain of a suspect records: its evidence in one line."""
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
    nodes = machine_services.check_node_state(machine, hostname, NodeState.DRAINED, reason)
    return nodes[0], reason


def drain_suspect(machine: Machine, hostname: str, benchmark: str = "",
                  window_days: int = DEFAULT_WINDOW_DAYS, user=None) -> tuple[Node, str]:
    """Drain one node because of its benchmark history; the reason quotes the evidence."""
    _, reason = drain_suspect_preview(machine, hostname, benchmark, window_days)
    nodes = machine_services.set_node_state(machine, hostname, NodeState.DRAINED, reason,
                                            user=user)
    return nodes[0], reason
