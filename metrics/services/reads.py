"""The database side of a scrape: a fixed number of aggregate queries, whatever the
number of machines, nodes or rows."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta

from django.db.models import (
    Count,
    DurationField,
    Exists,
    ExpressionWrapper,
    F,
    OuterRef,
    Q,
    Subquery,
    Sum,
)
from django.utils import timezone

from allocation.models import Allocation, Machine, Node, NodeState, SlurmLink
from health.models import Estimate
from hxportal.models import TERMINAL_RUN_STATUSES, RunStatus
from metrics.constants import LATENCY_BUCKETS
from metrics.models import HealthSnapshot
from metrics.readings import (
    EstimateReading,
    HealthReading,
    LatencyReading,
    MachineReading,
    QueueReading,
    Readings,
    SlurmReading,
)
from recommendations.choices import RecommendationStatus
from recommendations.models import Recommendation
from simulation.models import SimulationRun


def read_all(queues: QueueReading, now: datetime | None = None) -> Readings:
    """Every reading of one scrape (the broker's ``queues`` are read by the caller)."""
    now = now or timezone.now()
    return Readings(
        machines=machine_readings(), health=health_readings(now),
        estimates=estimate_readings(now), recommendations=recommendation_counts(),
        latency=latency_readings(), slurm=slurm_readings(now), queues=queues,
        node_states=tuple(NodeState.values),
        recommendation_statuses=tuple(RecommendationStatus.values),
        simulation_runs=simulation_run_counts(), simulation_statuses=tuple(RunStatus.values),
        simulation_runs_continuing=SimulationRun.objects.filter(continued__gt=0).exclude(
            status__in=TERMINAL_RUN_STATUSES).count())


def simulation_run_counts() -> dict[str, int]:
    """status -> simulation runs (a calibration's are most of them)."""
    return dict(SimulationRun.objects.order_by().values("status").annotate(n=Count("id"))
                .values_list("status", "n"))


def _free_nodes():
    held = Allocation.objects.filter(node=OuterRef("pk"), released_at__isnull=True)
    return Node.objects.filter(state=NodeState.UP).exclude(Exists(held))


def machine_readings() -> list[MachineReading]:
    """Nodes by state, held and free nodes, whole free switches: four queries."""
    machines = list(Machine.objects.order_by("name").only("id", "name", "sides",
                                                          "concentration"))
    states: dict[int, dict[str, int]] = defaultdict(dict)
    for machine_id, state, n in (Node.objects.order_by().values("machine_id", "state")
                                 .annotate(n=Count("id"))
                                 .values_list("machine_id", "state", "n")):
        states[machine_id][state] = n
    held = dict(Allocation.objects.filter(released_at__isnull=True).order_by()
                .values("node__machine_id").annotate(n=Count("id"))
                .values_list("node__machine_id", "n"))
    free = dict(_free_nodes().order_by().values("machine_id").annotate(n=Count("id"))
                .values_list("machine_id", "n"))
    whole: dict[int, int] = defaultdict(int)
    for machine_id in (_free_nodes().order_by().values("machine_id", "switch")
                       .annotate(n=Count("id"), c=F("machine__concentration"))
                       .filter(n=F("c")).values_list("machine_id", flat=True)):
        whole[machine_id] += 1
    return [MachineReading(machine=m.name, nodes_by_state=states[m.pk],
                           allocated=held.get(m.pk, 0), free=free.get(m.pk, 0),
                           switches=m.switch_count, whole_free_switches=whole[m.pk])
            for m in machines]


def health_readings(now: datetime) -> list[HealthReading]:
    """The stored snapshots; which candidates are still up is read now."""
    snapshots = list(HealthSnapshot.objects.select_related("machine").order_by("machine__name"))
    names = sorted({name for s in snapshots for name in s.candidates})
    up = set(Node.objects.filter(hostname__in=names, state=NodeState.UP)
             .values_list("machine_id", "hostname")) if names else set()
    return [HealthReading(
        machine=s.machine.name, benchmark=s.benchmark,
        age_seconds=max(0.0, (now - s.computed_at).total_seconds()), node_runs=s.node_runs,
        candidates=len(s.candidates),
        candidates_up=sum((s.machine_id, name) in up for name in s.candidates),
        watch=s.watch, duration_seconds=s.duration_seconds) for s in snapshots]


def estimate_readings(now: datetime) -> list[EstimateReading]:
    """The newest estimate of each (machine, benchmark)."""
    newest = Subquery(Estimate.objects.filter(machine=OuterRef("machine"),
                                              benchmark=OuterRef("benchmark"))
                      .order_by("-created_at", "-id").values("pk")[:1])
    rows = (Estimate.objects.annotate(newest=newest).filter(pk=F("newest"))
            .select_related("machine").order_by("machine__name", "benchmark"))
    return [EstimateReading(
        machine=e.machine.name, benchmark=e.benchmark, p_abn=e.p_abn, p_abn_low=e.p_abn_low,
        p_abn_high=e.p_abn_high, confidence=e.confidence, alpha_abn=e.alpha_abn,
        alpha_abn_low=e.alpha_abn_low, alpha_abn_high=e.alpha_abn_high, t_bench=e.t_bench,
        node_runs=e.runs, abnormal_runs=e.abnormal_runs,
        age_seconds=max(0.0, (now - e.created_at).total_seconds())) for e in rows]


def recommendation_counts() -> dict[tuple[str, str], int]:
    """(machine, status) -> recommendations."""
    return {(machine, status): n for machine, status, n in (
        Recommendation.objects.order_by().values("machine__name", "status")
        .annotate(n=Count("id")).values_list("machine__name", "status", "n"))}


def latency_readings() -> list[LatencyReading]:
    """Answered recommendations per machine and method, bucketed by latency (request
    to answer) in one query."""
    latency = ExpressionWrapper(F("finished_at") - F("created_at"),
                                output_field=DurationField())
    buckets = {f"le_{i}": Count("id", filter=Q(latency__lte=timedelta(seconds=le)))
               for i, le in enumerate(LATENCY_BUCKETS)}
    rows = (Recommendation.objects.filter(finished_at__isnull=False).order_by()
            .annotate(latency=latency).values("machine__name", "method")
            .annotate(n=Count("id"), total=Sum("latency"), **buckets)
            .order_by("machine__name", "method"))
    return [LatencyReading(
        machine=row["machine__name"], method=row["method"],
        buckets=tuple((le, row[f"le_{i}"]) for i, le in enumerate(LATENCY_BUCKETS)),
        count=row["n"], total_seconds=max(0.0, _seconds(row["total"])))
        for row in rows]


def _seconds(value: timedelta | int | None) -> float:
    """A summed duration: a timedelta, or microseconds where the backend sums integers."""
    if value is None:
        return 0.0
    if isinstance(value, timedelta):
        return value.total_seconds()
    return value / 1e6


def slurm_readings(now: datetime) -> list[SlurmReading]:
    """Each machine's Slurm link (machines never synced have none)."""
    return [SlurmReading(
        machine=link.machine.name, enabled=link.enabled,
        age_seconds=None if link.last_success_at is None else
        max(0.0, (now - link.last_success_at).total_seconds()),
        consecutive_failures=link.consecutive_failures, failing=bool(link.last_error),
        failures_total=link.failures_total, syncs_total=link.syncs_total,
        last_duration_seconds=link.last_duration_seconds)
        for link in SlurmLink.objects.select_related("machine").order_by("machine__name")]
