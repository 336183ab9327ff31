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
from health import maths
from health.constants import DEFAULT_WINDOW_DAYS
from health.models import BenchmarkResult
from health.services.window import check_window, run_key, window_runs
from hxportal import ownership
from hxportal.text import pluralize

#: The drain rule of :func:`maths.node_suspicion` (docs/domain.md section 5.5): a node
#: is a drain candidate when its suspicion *score*, the posterior probability that it is
#: persistently abnormal (prior DRAIN_PRIOR), is at least DRAIN_PROBABILITY and it has
#: at least DRAIN_MIN_RUNS runs.
DRAIN_PROBABILITY = maths.DEFAULT_DRAIN_PROBABILITY
DRAIN_MIN_RUNS = maths.DEFAULT_MIN_RUNS
DRAIN_PRIOR = maths.DEFAULT_PRIOR_PERSISTENT
#: How many watch-list nodes the pages list (most suspect first).
WATCH_SHOWN = 20


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
    suspicion: list[maths.NodeSuspicion]
    latest: dict[str, tuple[float, bool, float]]  # node -> (seconds, abnormal, ratio)
    rule: dict[str, Any] = field(default_factory=dict)

    @property
    def by_node(self) -> dict[str, maths.NodeSuspicion]:
        return {s.node: s for s in self.suspicion}

    @property
    def candidates(self) -> list[maths.NodeSuspicion]:
        return [s for s in self.suspicion if s.drain_candidate]

    @property
    def watch(self) -> list[maths.NodeSuspicion]:
        """Nodes with abnormal runs that are not (yet) drain candidates, most suspect
        first; each says how many more abnormal runs would make it one."""
        return [s for s in self.suspicion if s.abnormal_runs and not s.drain_candidate]


def suspicion_level(item: maths.NodeSuspicion | None) -> str:
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
    result = maths.classify(runs)
    suspicion = maths.node_suspicion(runs, result.flags, result.ratios)
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
    for machine_id, job, health_round, host, bench, secs in (
            BenchmarkResult.objects.filter(wanted, measured_at__gte=start, measured_at__lte=end)
            .order_by("measured_at", "id")
            .values_list("machine_id", "job_id", "health_round_id", "node__hostname",
                         "benchmark", "seconds")):
        runs[machine_id].append((run_key(job, health_round), host, bench, secs))
    out = {}
    for m in machines:
        benchmark = benchmark_of.get(m.pk) or ""
        try:
            out[m.pk] = _classified(m, benchmark, [], window, start, runs.get(m.pk, []))
        except ValueError:  # an overview shows the other machines; the health page says why
            out[m.pk] = _classified(m, benchmark, [], window, start, [])
    return out


def _mask_evidence(suspicion: list[maths.NodeSuspicion],
                   reader: Any) -> list[maths.NodeSuspicion]:
    """Evidence naming another user's job says "private"; health rounds belong to no one."""
    cited = {int(key) for item in suspicion for key in item.evidence if key.isdigit()}
    own = {str(pk) for pk in Job.objects.filter(owner=reader, pk__in=cited)
           .values_list("pk", flat=True)}
    return [replace(item, evidence=tuple(
        key if key in own or not key.isdigit() else "private" for key in item.evidence))
        for item in suspicion]


def node_history(node: Node, benchmark: str = "", limit: int = 200,
                 reader: Any = None) -> list[dict[str, Any]]:
    """The node's latest results, newest first, with the job median for context;
    jobs that ``reader`` may not read (``HX_PRIVATE_DATA``) are not named."""
    private = reader is not None and not ownership.reads_everything(reader)
    query = node.benchmark_results.select_related("job")
    if benchmark:
        query = query.filter(benchmark=benchmark)
    results = list(query.order_by("-measured_at", "-id")[:limit])
    medians = {(job_id, round_id, name): maths.median(
                   BenchmarkResult.objects.filter(job_id=job_id, health_round_id=round_id,
                                                  benchmark=name)
                   .values_list("seconds", flat=True))
               for job_id, round_id, name in {(r.job_id, r.health_round_id, r.benchmark)
                                              for r in results}}
    hidden = {r.job_id for r in results
              if private and r.job_id and r.job.owner_id != reader.pk}
    out = []
    for r in results:
        median = medians[(r.job_id, r.health_round_id, r.benchmark)]
        out.append({"job": None if r.job_id in hidden else r.job_id,
                    "round": r.health_round_id,
                    "job_name": ("another user's job" if r.job_id in hidden else
                                 r.job.name if r.job_id else
                                 f"health round {r.health_round_id}"),
                    "external_id": "" if r.job_id in hidden or not r.job_id else
                    r.job.external_id,
                    "benchmark": r.benchmark, "seconds": r.seconds,
                    "measured_at": r.measured_at, "job_median": median,
                    "ratio": r.seconds / median})
    return out


def drain_reason(item: maths.NodeSuspicion) -> str:
    """The node-state reason a drain of a suspect records: its evidence in one line."""
    return (f"suspicion: {item.abnormal_runs}/{item.runs} runs abnormal "
            f"(score {item.score:.3g})")[:255]


def needs_text(item: maths.NodeSuspicion) -> str:
    """What a watch-list node lacks to be a drain candidate, in words.

    >>> from health.maths import NodeSuspicion
    >>> base = dict(node="n1", runs=2, abnormal_runs=2, abnormal_fraction=1.0,
    ...             mean_slowdown=1.3, p_posterior=0.1, p_interval=(0.0, 0.3), score=0.9,
    ...             drain_candidate=False, evidence=())
    >>> needs_text(NodeSuspicion(**base, runs_needed=1))
    'needs 1 more abnormal run'
    >>> needs_text(NodeSuspicion(**base, runs_needed=3)), needs_text(NodeSuspicion(**base))
    ('needs 3 more abnormal runs', 'not within 50 more runs')
    """
    if item.drain_candidate:
        return "drain candidate"
    if item.runs_needed is None:
        return f"not within {maths.DEFAULT_MAX_RUNS_NEEDED} more runs"
    return f"needs {pluralize(item.runs_needed, 'more abnormal run')}"


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
