"""What the home page shows per machine, in a fixed number of queries.

Read-side only. Every figure is one aggregate query over all machines (or a
join through them), so the page costs the same whatever the number of
machines; node health reuses :func:`health.services.machines_health` (the
same classification and suspicion rule as the health page).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db.models import Count, Exists, F, OuterRef, Q, Subquery
from django.utils import timezone

from allocation.models import Allocation, Job, JobStatus, Machine, Node, NodeState
from allocation.services import queries
from health import services as health
from health.models import Estimate, EstimationRun
from hxportal import ownership
from hxportal.models import RunStatus
from recommendations.models import PolicyPrediction
from simulation import services as simulations
from simulation.models import RunOrigin, SimulationRun, Sweep

#: How far back "failed recently" looks.
RECENT_DAYS = 7
#: How many failures of each kind are listed (the count is always complete).
FAILURES_SHOWN = 5
#: How many watch-list nodes a machine card names (the count is always complete).
WATCH_SHOWN = 5


@dataclass
class MachineSummary:
    machine: Machine
    up: int = 0
    drained: int = 0
    down: int = 0
    held: int = 0
    free: int = 0
    free_switches: int = 0
    jobs: dict[str, int] = field(default_factory=dict)
    estimate: Estimate | None = None
    estimation_running: int = 0
    health: health.MachineHealth | None = None
    candidates_up: list[str] = field(default_factory=list)
    simulations_active: int = 0
    failed_estimations: list[EstimationRun] = field(default_factory=list)
    failed_predictions: list[PolicyPrediction] = field(default_factory=list)
    board: Any = None  # dashboard.board.Board, set by the page

    @property
    def total(self) -> int:
        return self.up + self.drained + self.down

    @property
    def utilisation(self) -> float:
        """Fraction of all nodes held by jobs."""
        return self.held / self.total if self.total else 0.0

    @property
    def utilisation_percent(self) -> int:
        return round(100 * self.utilisation)

    @property
    def running(self) -> int:
        return self.jobs.get(JobStatus.RUNNING, 0)

    @property
    def allocated(self) -> int:
        return self.jobs.get(JobStatus.ALLOCATED, 0)

    @property
    def pending(self) -> int:
        return self.jobs.get(JobStatus.PENDING, 0)

    @property
    def candidates(self) -> int:
        return len(self.health.candidates) if self.health else 0

    @property
    def watch_total(self) -> int:
        return len(self.health.watch) if self.health else 0

    @property
    def watch(self) -> list[tuple[str, str]]:
        """The most suspect watch-list nodes: (hostname, evidence and what it lacks)."""
        if not self.health:
            return []
        return [(s.node, f"{s.abnormal_runs}/{s.runs} abnormal, {health.needs_text(s)}")
                for s in self.health.watch[:WATCH_SHOWN]]


def _node_counts(ids: list[int]) -> dict[int, dict[str, int]]:
    counts: dict[int, dict[str, int]] = defaultdict(dict)
    for row in (Node.objects.filter(machine_id__in=ids).order_by()
                .values("machine_id", "state").annotate(n=Count("id"))):
        counts[row["machine_id"]][row["state"]] = row["n"]
    return counts


def _held_counts(ids: list[int]) -> dict[int, int]:
    return dict(Allocation.objects.filter(node__machine_id__in=ids, released_at__isnull=True)
                .order_by().values("node__machine_id").annotate(n=Count("id"))
                .values_list("node__machine_id", "n"))


def _free_nodes(ids: list[int]):
    held = Allocation.objects.filter(node=OuterRef("pk"), released_at__isnull=True)
    return Node.objects.filter(machine_id__in=ids, state=NodeState.UP).exclude(Exists(held))


def _free_counts(ids: list[int]) -> tuple[dict[int, int], dict[int, int]]:
    """(free nodes, whole free switches) per machine; a switch is whole when all its
    ``concentration`` nodes are free."""
    free = dict(_free_nodes(ids).order_by().values("machine_id").annotate(n=Count("id"))
                .values_list("machine_id", "n"))
    whole: dict[int, int] = defaultdict(int)
    for machine_id in (_free_nodes(ids).order_by().values("machine_id", "switch")
                       .annotate(n=Count("id"), c=F("machine__concentration"))
                       .filter(n=F("c")).values_list("machine_id", flat=True)):
        whole[machine_id] += 1
    return free, whole


def _job_counts(ids: list[int], user) -> dict[int, dict[str, int]]:
    active = [JobStatus.PENDING, JobStatus.ALLOCATED, JobStatus.RUNNING]
    jobs = ownership.readable(Job.objects.filter(machine_id__in=ids, status__in=active),
                              user, "owner")
    counts: dict[int, dict[str, int]] = defaultdict(dict)
    for row in jobs.order_by().values("machine_id", "status").annotate(n=Count("id")):
        counts[row["machine_id"]][row["status"]] = row["n"]
    return counts


def _latest_estimates(ids: list[int]) -> dict[int, Estimate]:
    """The newest estimate of each machine (any benchmark), as the spare model uses it."""
    newest = Subquery(Estimate.objects.filter(machine=OuterRef("pk"))
                      .order_by("-created_at", "-id").values("pk")[:1])
    latest = Machine.objects.filter(pk__in=ids).annotate(latest=newest).values("latest")
    return {e.machine_id: e for e in Estimate.objects.filter(pk__in=latest)}


def machine_summaries(user, now=None) -> list[MachineSummary]:
    """One summary per machine, in name order (about ten queries in all)."""
    now = now or timezone.now()
    machines = list(queries.machines())
    ids = [m.pk for m in machines]
    if not ids:
        return []
    since = now - timedelta(days=RECENT_DAYS)
    nodes = _node_counts(ids)
    held = _held_counts(ids)
    free, whole = _free_counts(ids)
    jobs = _job_counts(ids, user)
    estimates = _latest_estimates(ids)
    states = health.machines_health(machines)
    estimations = defaultdict(int)
    for machine_id, n in (EstimationRun.objects.filter(
            machine_id__in=ids, status__in=[RunStatus.PENDING, RunStatus.RUNNING]).order_by()
            .values("machine_id").annotate(n=Count("id")).values_list("machine_id", "n")):
        estimations[machine_id] = n
    failed_est: dict[int, list[EstimationRun]] = defaultdict(list)
    for run in (EstimationRun.objects.filter(machine_id__in=ids, status=RunStatus.FAILED,
                                             created_at__gte=since)
                .defer("log", "result", "parameters").order_by("-created_at", "-id")[:50]):
        failed_est[run.machine_id].append(run)
    failed_pred: dict[int, list[PolicyPrediction]] = defaultdict(list)
    predictions = ownership.readable(PolicyPrediction.objects.filter(
        recommendation__machine_id__in=ids, status=RunStatus.FAILED, created_at__gte=since),
        user, "user")
    for pred in (predictions.select_related("recommendation")
                 .only("id", "policy", "error", "created_at", "recommendation__id",
                       "recommendation__machine_id")
                 .order_by("-created_at", "-id")[:50]):
        failed_pred[pred.recommendation.machine_id].append(pred)
    sims = _active_simulations_per_machine(ids, user)
    candidate_names = {n for s in states.values() for n in
                       (c.node for c in s.candidates)}
    up_names = _up_hostnames(ids, candidate_names)
    out = []
    for machine in machines:
        counts = nodes.get(machine.pk, {})
        state = states.get(machine.pk)
        out.append(MachineSummary(
            machine=machine, up=counts.get(NodeState.UP, 0),
            drained=counts.get(NodeState.DRAINED, 0), down=counts.get(NodeState.DOWN, 0),
            held=held.get(machine.pk, 0), free=free.get(machine.pk, 0),
            free_switches=whole.get(machine.pk, 0), jobs=jobs.get(machine.pk, {}),
            estimate=estimates.get(machine.pk), estimation_running=estimations[machine.pk],
            health=state,
            candidates_up=[c.node for c in (state.candidates if state else [])
                           if (machine.pk, c.node) in up_names],
            simulations_active=sims.get(machine.pk, 0),
            failed_estimations=failed_est[machine.pk][:FAILURES_SHOWN],
            failed_predictions=failed_pred[machine.pk][:FAILURES_SHOWN]))
    return out


def _up_hostnames(ids: list[int], names: set[str]) -> set[tuple[int, str]]:
    """(machine, hostname) of the named nodes that are still up (candidates to drain)."""
    if not names:
        return set()
    return set(Node.objects.filter(machine_id__in=ids, hostname__in=sorted(names)[:900],
                                   state=NodeState.UP).values_list("machine_id", "hostname"))


def _active_simulations_per_machine(ids: list[int], user) -> dict[int, int]:
    runs = ownership.readable(SimulationRun.objects.filter(
        machine_id__in=ids, origin=RunOrigin.SUBMITTED,
        status__in=[RunStatus.PENDING, RunStatus.RUNNING]), user, "user")
    return dict(runs.order_by().values("machine_id").annotate(n=Count("id"))
                .values_list("machine_id", "n"))


def site_activity(user, now=None) -> dict[str, Any]:
    """Simulation runs and sweeps in progress, and failed simulation runs, site-wide."""
    now = now or timezone.now()
    since = now - timedelta(days=RECENT_DAYS)
    # Submitted runs only, as on the runs page: predictions belong to their recommendation.
    runs = ownership.readable(SimulationRun.objects.filter(origin=RunOrigin.SUBMITTED),
                              user, "user")
    counts = dict(runs.filter(status__in=[RunStatus.PENDING, RunStatus.RUNNING]).order_by()
                  .values("status").annotate(n=Count("id")).values_list("status", "n"))
    open_sweeps = simulations.with_counts(
        ownership.readable(Sweep.objects.all(), user, "user")).filter(
        Q(**{f"n_{RunStatus.PENDING}__gt": 0}) | Q(**{f"n_{RunStatus.RUNNING}__gt": 0}))
    sweeps = list(open_sweeps.order_by("-created_at", "-id")[:FAILURES_SHOWN + 1])
    failed = runs.filter(Q(finished_at__gte=since) | Q(finished_at__isnull=True,
                                                      created_at__gte=since),
                         status=RunStatus.FAILED)
    failed_shown = list(failed.defer("result", "log", "config", "summary")
                        .order_by("-created_at", "-id")[:FAILURES_SHOWN + 1])
    return {
        "runs_running": counts.get(RunStatus.RUNNING, 0),
        "runs_pending": counts.get(RunStatus.PENDING, 0),
        "sweeps": [(s, _labelled(simulations, simulations.sweep_progress(s)))
                   for s in sweeps[:FAILURES_SHOWN]],
        "more_sweeps": len(sweeps) > FAILURES_SHOWN,
        "failed_runs": failed_shown[:FAILURES_SHOWN],
        "more_failed_runs": len(failed_shown) > FAILURES_SHOWN,
        "recent_days": RECENT_DAYS,
    }


def _labelled(simulations, progress: dict[str, Any]) -> dict[str, Any]:
    return {**progress, "label": simulations.sweep_status_text(progress)}
