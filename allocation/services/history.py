"""A machine's job history: the synthetic week ``hx_demo`` records, and the spans the
board's usage charts are binned from.

Synthetic jobs are ordinary finished :class:`Job` rows with ``source`` =
``JobSource.SYNTHETIC`` (``"demo"``), owned by an inactive account, holding no nodes
(like the finished jobs the Slurm sync reads from accounting), so every page that
counts jobs can tell them apart and say so.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Max, Q
from django.utils import timezone

from allocation.choices import CommPattern, JobSource, JobStatus
from allocation.models import Job, Machine
from allocation.usage import JobSpan, SyntheticJob, synthetic_history
from hxportal.roles import Role

#: The inactive account that owns synthetic jobs.
SYNTHETIC_OWNER = "hx-synthetic"
#: Slurm's end states as the portal's job statuses.
_STATUS = {"COMPLETED": JobStatus.COMPLETED, "FAILED": JobStatus.FAILED,
           "TIMEOUT": JobStatus.FAILED, "CANCELLED": JobStatus.CANCELLED}


def _owner():
    model = get_user_model()
    user, created = model.objects.get_or_create(
        username=SYNTHETIC_OWNER, defaults={"role": Role.VIEWER, "is_active": False})
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user


def _at(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=UTC)


@transaction.atomic
def record_synthetic(machine: Machine, history: Sequence[SyntheticJob]) -> int:
    """Store finished synthetic jobs on ``machine`` (in one transaction, under the
    machine's allocation lock); returns how many were stored."""
    Machine.objects.select_for_update().get(pk=machine.pk)
    owner = _owner()
    rows = [Job(
        machine=machine, owner=owner, name=j.name[:128], node_count=j.nodes,
        pattern=CommPattern.UNKNOWN, status=_STATUS.get(j.state, JobStatus.COMPLETED),
        created_at=_at(j.submit), allocated_at=_at(j.start) if j.start is not None else None,
        finished_at=_at(j.end),
        actual_runtime=round(j.end - j.start, 3) if j.start is not None else None,
        wall_time=j.wall_time,
        source=JobSource.SYNTHETIC, slurm_user=j.user[:64], slurm_state=j.state[:24],
        slurm_partition="batch", exit_code=j.exit_code) for j in history]
    Job.objects.bulk_create(rows, batch_size=1000)
    return len(rows)


def seed_synthetic_week(machine: Machine, *, days: int = 7, seed: int = 1,
                        now: datetime | None = None) -> int:
    """Give ``machine`` ``days`` of synthetic history ending now, unless it already
    has a synthetic job in that span; returns the jobs stored (0 when skipped)."""
    now = now or timezone.now()
    since = now - timedelta(days=days)
    latest = Job.objects.filter(machine=machine, source=JobSource.SYNTHETIC).aggregate(
        last=Max("finished_at"))["last"]
    if latest is not None and latest >= since:
        return 0
    nodes = machine.nodes.count()
    return record_synthetic(machine, synthetic_history(
        nodes, since.timestamp(), now.timestamp(), seed=seed))


def spans(machine_ids: Sequence[int], since: datetime, reader_filter: Q | None = None
          ) -> dict[int, tuple[list[JobSpan], int]]:
    """Per machine: the spans of every job that waited or ran after ``since`` (one
    query), and how many of them are synthetic."""
    jobs = Job.objects.filter(machine_id__in=list(machine_ids)).filter(
        Q(finished_at__isnull=True) | Q(finished_at__gte=since))
    if reader_filter is not None:
        jobs = jobs.filter(reader_filter)
    out: dict[int, tuple[list[JobSpan], int]] = {m: ([], 0) for m in machine_ids}
    for machine_id, submit, start, end, nodes, source, status in jobs.order_by().values_list(
            "machine_id", "created_at", "allocated_at", "finished_at", "node_count",
            "source", "status"):
        if start is None and status in JobStatus.terminal():
            if end is None:
                continue
            start = end  # cancelled while waiting: it waited until then, never ran
        items, synthetic = out[machine_id]
        items.append(JobSpan(submit.timestamp(), start.timestamp() if start else None,
                             end.timestamp() if end else None, nodes))
        out[machine_id] = (items, synthetic + (source == JobSource.SYNTHETIC))
    return out
