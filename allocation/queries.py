"""Read-side querysets shared by pages and the API (writes live in services)."""

from __future__ import annotations

from django.db.models import OuterRef, QuerySet, Subquery

from allocation.models import Allocation, Machine, Node


def nodes_with_job(queryset: QuerySet[Node] | None = None) -> QuerySet[Node]:
    """Nodes annotated with ``job``: the id of the job holding each, or None."""
    active = Allocation.objects.filter(node=OuterRef("pk"), released_at__isnull=True)
    base = Node.objects.all() if queryset is None else queryset
    return base.select_related("machine").annotate(job=Subquery(active.values("job_id")[:1]))


def machines() -> QuerySet[Machine]:
    return Machine.objects.order_by("name")
