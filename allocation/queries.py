"""Read-side querysets shared by pages and the API (writes live in services)."""

from __future__ import annotations

from django.db.models import Exists, OuterRef, QuerySet, Subquery

from allocation.models import Allocation, Job, JobStatus, Machine, Node
from hxportal import ownership


def nodes_with_job(queryset: QuerySet[Node] | None = None, reader=None) -> QuerySet[Node]:
    """Nodes annotated with ``held`` (an active allocation holds it) and ``job``: the
    id of the holding job, or None; also None for a job ``reader`` may not read
    (``HX_PRIVATE_DATA``), so the node shows as held by nobody named."""
    active = Allocation.objects.filter(node=OuterRef("pk"), released_at__isnull=True)
    shown = active if reader is None or ownership.reads_everything(reader) else active.filter(
        job__owner=reader)
    base = Node.objects.all() if queryset is None else queryset
    return base.select_related("machine").annotate(
        held=Exists(active), job=Subquery(shown.values("job_id")[:1]))


def machines() -> QuerySet[Machine]:
    return Machine.objects.order_by("name")


def held_node_indices(machine: Machine) -> list[int]:
    """Endpoint indices of the machine's nodes that some job holds now."""
    return list(Allocation.objects.filter(node__machine=machine, released_at__isnull=True)
                .values_list("node__index", flat=True))


def active_jobs(machine: Machine) -> QuerySet[Job]:
    return Job.objects.filter(machine=machine, status__in=JobStatus.holding_nodes()) \
        .select_related("owner").order_by("id")
