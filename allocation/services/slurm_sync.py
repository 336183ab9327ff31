"""Keep a machine in step with Slurm: nodes, every job, and the site's job history.

One sync of one machine:

1. **Claim** the machine's :class:`SlurmLink` lease with a conditional UPDATE
   (atomic on PostgreSQL and SQLite alike), so two workers never sync one
   machine at once; a sync that finds the lease taken returns ``skipped``.
2. **Read Slurm** outside any transaction: ``sinfo``, ``squeue`` and, when
   accounting answers, ``sacct`` from the last cursor (with an overlap).
   If Slurm cannot be reached, the failure is recorded on the link (one line)
   and :class:`SyncFailed` raised; nothing else is touched.
3. **Plan** with the pure :func:`allocation.slurm.sync_plan.plan_sync`.
4. **Write** the plan in one transaction that holds the machine row lock (the
   lock every allocation takes), so the sync and a portal allocation never
   interleave. Upserts key on ``(machine, slurm_job_id)``: a second sync of the
   same state changes nothing, and a sync after an outage neither loses nor
   duplicates a job.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from celery import current_app
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from allocation.choices import AllocationRole, JobSource, JobStatus, NodeEventSource
from allocation.models import Allocation, Job, Machine, Node, SlurmLink
from allocation.services import slurm
from allocation.slurm import SlurmClient, SlurmError, SlurmJob
from allocation.slurm.sync_plan import KnownJob, SyncPlan, merge_jobs, plan_sync, portal_status
from hxportal import hostlists
from hxportal.batching import chunks
from hxportal.roles import Role

#: Celery task names (stable: queued messages and beat rows carry them).
SYNC_MACHINE_TASK = "hx.slurm.sync_machine"
SYNC_DUE_TASK = "hx.slurm.sync_due"
#: Accounting is read again from this long before the last cursor (late writes).
HISTORY_OVERLAP = timedelta(minutes=10)
#: Slurm's job name as the portal stores it.
MAX_NAME = 128
#: Rows per bulk INSERT or UPDATE statement (a bulk UPDATE of n rows and k fields
#: binds about 2 x n x k values; Django splits further where SQLite needs it).
WRITE_BATCH = 500


class SyncFailed(RuntimeError):
    """The sync could not run (Slurm unreachable, unknown nodes); one line."""


@dataclass
class SyncReport:
    """What one sync did, for the command's ``--json``, the page and the logs."""

    machine: str
    status: str = "ok"  # ok | skipped | failed
    seconds: float = 0.0
    nodes: int = 0
    node_changes: int = 0
    jobs_seen: int = 0
    jobs_created: int = 0
    jobs_updated: int = 0
    jobs_finished: int = 0
    jobs_vanished: int = 0
    allocations_released: int = 0
    allocations_added: int = 0
    evicted_portal_jobs: list[int] = field(default_factory=list)
    deferred: int = 0
    accounting: bool = False
    warnings: list[str] = field(default_factory=list)
    error: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# ------------------------------------------------------------------ the lease

def _lease_seconds() -> float:
    return settings.HX_SLURM_TIMEOUT * 4 + 60


def _claim(link: SlurmLink) -> bool:
    now = timezone.now()
    return SlurmLink.objects.filter(pk=link.pk).filter(
        Q(lease_until__isnull=True) | Q(lease_until__lt=now)).update(
        lease_until=now + timedelta(seconds=_lease_seconds()), last_attempt_at=now) == 1


def _record_failure(link: SlurmLink, message: str) -> None:
    now = timezone.now()
    SlurmLink.objects.filter(pk=link.pk).update(
        lease_until=None, last_error=message[:300], last_error_at=now,
        consecutive_failures=link.consecutive_failures + 1,
        failures_total=link.failures_total + 1)


# ------------------------------------------------------------------ reading

def _read_slurm(link: SlurmLink, client: SlurmClient, report: SyncReport
                ) -> tuple[list, list[SlurmJob], bool, datetime | None]:
    """(nodes, jobs, complete, new history cursor); raises SlurmError."""
    nodes = client.nodes()
    current = client.jobs()
    mode = (settings.HX_SLURM_ACCOUNTING or "auto").lower()
    history: list[SlurmJob] = []
    cursor = None
    complete = True
    if mode != "off":
        now = timezone.now()
        start = (link.history_until - HISTORY_OVERLAP if link.history_until else
                 now - timedelta(days=settings.HX_SLURM_HISTORY_DAYS))
        try:
            history = client.history(start)
            cursor = now
            report.accounting = True
        except SlurmError as exc:
            if mode == "on":
                raise
            disabled = "disabled" in str(exc).lower() or exc.kind == "missing"
            if not disabled:
                # slurmdbd exists but did not answer: do not conclude that a job the
                # portal saw has ended just because squeue forgot it.
                complete = False
                report.warnings.append(f"accounting not read: {exc}")
    return nodes, merge_jobs(current, history), complete, cursor


def _portal_side(machine: Machine, slurm_ids: list[int]
                 ) -> tuple[dict[str, tuple[str, str]], dict[int, KnownJob], dict[str, int]]:
    portal_nodes = {h: (s, r) for h, s, r in machine.nodes.values_list(
        "hostname", "state", "state_reason")}
    holders: dict[str, int] = {}
    held_by_job: dict[int, set[str]] = {}
    for host, job_id in Allocation.objects.filter(
            node__machine=machine, released_at__isnull=True).values_list(
            "node__hostname", "job_id"):
        holders[host] = job_id
        held_by_job.setdefault(job_id, set()).add(host)
    fields = ("pk", "slurm_job_id", "status", "slurm_state", "source")
    rows = list(Job.objects.filter(machine=machine, slurm_job_id__isnull=False, status__in=[
        JobStatus.PENDING, JobStatus.ALLOCATED, JobStatus.RUNNING]).values_list(*fields))
    for chunk in chunks(slurm_ids):
        rows += Job.objects.filter(machine=machine, slurm_job_id__in=chunk).values_list(*fields)
    known = {sid: KnownJob(pk=pk, status=status, slurm_state=state,
                           nodes=frozenset(held_by_job.get(pk, ())),
                           pinned=source == JobSource.PORTAL)
             for pk, sid, status, state, source in rows}
    return portal_nodes, known, holders


def _link_placed(machine: Machine, jobs: list[SlurmJob]) -> None:
    """Give a portal job placed for an accepted recommendation the id of the Slurm
    job that runs it (its comment says ``hxportal-job=<id>``), when the submitter
    did not report it (``POST /api/v1/jobs/<id>/submitted/``): one job, not two."""
    tagged = {j.portal_job: j.job_id for j in jobs if j.portal_job is not None}
    if not tagged:
        return
    linked = set(Job.objects.filter(machine=machine, slurm_job_id__in=list(tagged.values()))
                 .values_list("slurm_job_id", flat=True))
    for pk, slurm_id in tagged.items():
        if slurm_id not in linked:
            Job.objects.filter(pk=pk, machine=machine, source=JobSource.PORTAL,
                               slurm_job_id__isnull=True).update(slurm_job_id=slurm_id)


# ------------------------------------------------------------------ writing

def _owners(users: set[str]) -> dict[str, Any]:
    """The portal user of each Slurm user name: the portal account of that name,
    else the ``hx-slurm`` account (which cannot sign in)."""
    model = get_user_model()
    found = {u.username: u for u in model.objects.filter(username__in=sorted(users))}
    missing = users - set(found)
    if missing:
        fallback, created = model.objects.get_or_create(
            username=slurm.SLURM_OWNER, defaults={"role": Role.VIEWER, "is_active": False})
        if created:
            fallback.set_unusable_password()
            fallback.save(update_fields=["password"])
        found.update(dict.fromkeys(missing, fallback))
    return found


def _job_fields(job: SlurmJob) -> dict[str, Any]:
    """The portal fields a Slurm job sets (from Slurm's record alone)."""
    status = JobStatus(portal_status(job))
    fields: dict[str, Any] = {
        "slurm_user": job.user[:64], "slurm_state": job.state[:24],
        "slurm_partition": job.partition[:64], "status": status,
        "node_count": max(job.num_nodes, len(job.nodes), 1),
        "allocated_at": job.start_time if job.nodes or job.finished else None,
        "finished_at": job.end_time if job.finished else None,
        "exit_code": job.exit_code if job.finished else None}
    if job.finished and job.start_time and job.end_time:
        fields["actual_runtime"] = max((job.end_time - job.start_time).total_seconds(), 0.0)
    return fields


def _apply_nodes(machine: Machine, plan: SyncPlan, report: SyncReport) -> None:
    if not plan.node_states:
        return
    now = timezone.now()
    nodes = {n.hostname: n for n in machine.nodes.filter(hostname__in=list(plan.node_states))}
    by_change: dict[tuple[str, str], list[Node]] = {}
    for host, wanted in plan.node_states.items():
        by_change.setdefault(wanted, []).append(nodes[host])
    for (state, reason), group in by_change.items():
        changes = [slurm.StateChange(n, n.state) for n in group]
        Node.objects.filter(pk__in=[n.pk for n in group]).update(
            state=state, state_reason=reason[:255], state_changed_at=now)
        slurm.audit(changes, state, reason, source=NodeEventSource.SLURM, in_slurm=True)
    report.node_changes = len(plan.node_states)


def _release_all(wanted: dict[int, dict[str, datetime]]) -> int:
    """Release, per portal job pk, the given hostnames' active allocations at the
    given times: one read and one bulk UPDATE per batch, not one UPDATE per job
    (the machine's row lock, held by :func:`_apply`, keeps the rows still)."""
    rows = []
    for chunk in chunks(sorted(wanted)):
        for pk, job_id, host in Allocation.objects.filter(
                job_id__in=chunk, released_at__isnull=True).values_list(
                "pk", "job_id", "node__hostname"):
            at = wanted[job_id].get(host)
            if at is not None:
                rows.append(Allocation(pk=pk, released_at=at))
    if not rows:
        return 0
    Allocation.objects.bulk_update(rows, ["released_at"], batch_size=WRITE_BATCH)
    return len(rows)


def _apply_releases(plan: SyncPlan, report: SyncReport) -> None:
    now = timezone.now()
    wanted: dict[int, dict[str, datetime]] = {}
    for pk, (hosts, at) in plan.releases.items():
        wanted.setdefault(pk, {}).update(dict.fromkeys(hosts, at or now))
    for pk, hosts in plan.evictions.items():
        wanted.setdefault(pk, {}).update(dict.fromkeys(hosts, now))
        report.evicted_portal_jobs.append(pk)
    report.allocations_released += _release_all(wanted)
    for chunk in chunks(plan.vanished):
        report.allocations_released += Allocation.objects.filter(
            job_id__in=chunk, released_at__isnull=True).update(released_at=now)
        Job.objects.filter(pk__in=chunk).update(status=JobStatus.COMPLETED, slurm_state="GONE",
                                                finished_at=now)
    report.jobs_vanished = len(plan.vanished)


def _changes(row: Job, fields: dict[str, Any]) -> list[str]:
    """Set on ``row`` what Slurm changed of a job the portal already has; the names
    of the changed fields."""
    if row.source == JobSource.PORTAL:
        # A portal job's N stays N (its spares add nodes), and while Slurm has it
        # pending it stays as the portal placed it.
        fields.pop("node_count")
        if fields["status"] == JobStatus.PENDING:
            for key in ("status", "allocated_at"):
                fields.pop(key)
    changed = [k for k, v in fields.items() if getattr(row, k) != v]
    for key in changed:
        setattr(row, key, fields[key])
    return changed


def _save_changes(changed: list[tuple[Job, list[str]]], report: SyncReport) -> None:
    """Write the changed jobs with one bulk UPDATE per set of changed fields (a
    sync's updates share a few such sets: started, finished, shrunk...)."""
    groups: dict[tuple[str, ...], list[Job]] = {}
    for row, fields in changed:
        groups.setdefault(tuple(sorted(fields)), []).append(row)
        report.jobs_updated += 1
        if "finished_at" in fields and row.finished_at is not None:
            report.jobs_finished += 1
    for fields, rows in groups.items():
        Job.objects.bulk_update(rows, list(fields), batch_size=WRITE_BATCH)


def _upsert(machine: Machine, jobs: list[SlurmJob], report: SyncReport) -> dict[int, Job]:
    """Create or update one portal job per Slurm job; the rows by Slurm id."""
    existing: dict[int, Job] = {}
    for chunk in chunks([j.job_id for j in jobs]):
        existing.update({j.slurm_job_id: j for j in Job.objects.filter(
            machine=machine, slurm_job_id__in=chunk)})
    owners = _owners({j.user for j in jobs if j.job_id not in existing})
    created, changed = [], []
    for job in jobs:
        fields = _job_fields(job)
        row = existing.get(job.job_id)
        if row is None:
            created.append(Job(
                machine=machine, owner=owners[job.user], name=(job.name or "job")[:MAX_NAME],
                external_id=str(job.job_id), source=JobSource.SLURM, slurm_job_id=job.job_id,
                created_at=job.submit_time or timezone.now(),
                wall_time=job.time_limit * 60.0 if job.time_limit else None, **fields))
            continue
        names = _changes(row, fields)
        if names:
            changed.append((row, names))
    _save_changes(changed, report)
    for row in Job.objects.bulk_create(created, batch_size=WRITE_BATCH):
        existing[row.slurm_job_id] = row
    report.jobs_created = len(created)
    return existing


def _grant(machine: Machine, jobs: list[SlurmJob], rows: dict[int, Job],
           report: SyncReport) -> None:
    """Active allocations for the nodes each running Slurm job holds and the portal
    does not show it holding yet (new jobs, or nodes added in Slurm)."""
    active = [j for j in jobs if j.active and j.nodes]
    if not active:
        return
    wanted = {h for j in active for h in j.nodes}
    nodes = {n.hostname: n for n in machine.nodes.filter(hostname__in=sorted(wanted))} \
        if len(wanted) <= 900 else {n.hostname: n for n in machine.nodes.all()}
    held = dict(Allocation.objects.filter(node__machine=machine, released_at__isnull=True)
                .values_list("node__hostname", "job_id"))
    now = timezone.now()
    new = []
    for job in active:
        row = rows[job.job_id]
        for rank, host in enumerate(job.nodes):
            holder = held.get(host)
            if holder == row.pk:
                continue
            if holder is not None:
                report.warnings.append(f"{host} of Slurm job {job.job_id} is still held by "
                                       f"portal job {holder}; retried next sync")
                continue
            new.append(Allocation(job=row, node=nodes[host], rank=rank,
                                  role=AllocationRole.PRIMARY,
                                  created_at=job.start_time or now))
            held[host] = row.pk
    Allocation.objects.bulk_create(new, batch_size=5000)
    report.allocations_added = len(new)


@transaction.atomic
def _apply(machine: Machine, plan: SyncPlan, report: SyncReport) -> None:
    Machine.objects.select_for_update().get(pk=machine.pk)  # the allocations' lock
    _apply_nodes(machine, plan, report)
    _apply_releases(plan, report)
    rows = _upsert(machine, plan.upserts, report)
    _grant(machine, plan.upserts, rows, report)


# ------------------------------------------------------------------ the entry point

def sync_machine(machine: Machine, client: SlurmClient | None = None) -> SyncReport:
    """Sync one machine with Slurm; the report, or :class:`SyncFailed` (recorded on
    the machine's link) when Slurm cannot be read or names nodes the machine lacks."""
    link = slurm.link_for(machine)
    report = SyncReport(machine=machine.name)
    if not _claim(link):
        report.status = "skipped"
        report.warnings.append("another sync of this machine is running")
        return report
    link.refresh_from_db()
    started = time.monotonic()
    try:
        nodes, jobs, complete, cursor = _read_slurm(link, client or slurm.client(), report)
        _link_placed(machine, jobs)
        portal_nodes, known, holders = _portal_side(machine, [j.job_id for j in jobs])
        plan = plan_sync(portal_nodes=portal_nodes, known_jobs=known, holders=holders,
                         slurm_nodes=nodes, slurm_jobs=jobs, partition=link.partition,
                         max_jobs=settings.HX_SLURM_SYNC_MAX_JOBS, complete=complete)
        if plan.unknown_nodes:
            raise SyncFailed(f"Slurm names nodes that machine {machine.name} does not have: "
                             f"{hostlists.compress(plan.unknown_nodes)[:200]}"
                             + (f" (partition {link.partition})" if link.partition else
                                "; link a partition to sync only its nodes"))
        report.nodes, report.jobs_seen = len(nodes), len(jobs)
        report.deferred = plan.deferred
        _apply(machine, plan, report)
    except (SlurmError, SyncFailed) as exc:
        report.status, report.error = "failed", str(exc)
        report.seconds = round(time.monotonic() - started, 3)
        _record_failure(link, str(exc))
        raise SyncFailed(str(exc)) from exc
    report.seconds = round(time.monotonic() - started, 3)
    _record_success(link, report, cursor if plan.deferred == 0 else link.history_until)
    return report


def _record_success(link: SlurmLink, report: SyncReport, cursor: datetime | None) -> None:
    counts = {k: v for k, v in report.as_dict().items() if isinstance(v, int | float | bool)}
    SlurmLink.objects.filter(pk=link.pk).update(
        lease_until=None, last_success_at=timezone.now(), last_error="",
        consecutive_failures=0, syncs_total=link.syncs_total + 1,
        last_duration_seconds=report.seconds, last_counts=counts,
        history_until=cursor or link.history_until)


def due_machines() -> list[Machine]:
    """Linked machines whose interval has passed since their last attempt."""
    now = timezone.now()
    due = []
    for link in SlurmLink.objects.filter(enabled=True).select_related("machine"):
        last = link.last_attempt_at
        if last is None or (now - last).total_seconds() >= link.interval_seconds:
            due.append(link.machine)
    return due


def configure(machine: Machine, *, enabled: bool | None = None, partition: str | None = None,
              interval_seconds: int | None = None) -> SlurmLink:
    """Link (or unlink) a machine to Slurm and set what its sync reads."""
    link = slurm.link_for(machine)
    if enabled is not None:
        link.enabled = enabled
    if partition is not None:
        link.partition = partition.strip()[:64]
    if interval_seconds is not None:
        link.interval_seconds = max(int(interval_seconds), 5)
    link.save(update_fields=["enabled", "partition", "interval_seconds"])
    return link


def request_sync(machine: Machine) -> None:
    """Queue one sync of ``machine`` for a worker (the machine page's button)."""
    slurm.link_for(machine)
    transaction.on_commit(lambda: current_app.send_task(SYNC_MACHINE_TASK, args=[machine.pk]))
