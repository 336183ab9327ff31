"""Read-side querysets shared by pages and the API (writes live in services)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db.models import Count, Exists, OuterRef, QuerySet, Subquery

from allocation.models import Allocation, Job, JobStatus, Machine, Node, NodeState
from hxportal import hostlists, ownership


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


def hostlist_cap(query: Mapping[str, Any]) -> int:
    """The most nodes a ``?hostlist=`` filter may name: the node count of the
    machine the query names, else of the largest machine (at least 1, so the
    refusal reads sensibly on an empty portal)."""
    named = Machine.objects.filter(name=query.get("machine") or "").only(
        "sides", "concentration")
    pool = named if named.exists() else Machine.objects.only("sides", "concentration")
    return max([m.node_count for m in pool], default=1)


def held_node_indices(machine: Machine) -> list[int]:
    """Endpoint indices of the machine's nodes that some job holds now."""
    return list(Allocation.objects.filter(node__machine=machine, released_at__isnull=True)
                .values_list("node__index", flat=True))


def active_jobs(machine: Machine) -> QuerySet[Job]:
    return Job.objects.filter(machine=machine, status__in=JobStatus.holding_nodes()) \
        .select_related("owner").order_by("id")


#: Above this many nodes in one state, the state table gives the count, not the hostlist.
MAX_STATE_HOSTLIST = 4096


def state_hostlists(machine: Machine) -> list[dict]:
    """Per node state: how many nodes and, unless there are very many, their hostlist."""
    counts = dict(machine.nodes.values_list("state").annotate(n=Count("id")).order_by())
    rows = []
    for state in NodeState.values:
        count = counts.get(state, 0)
        names = (machine.nodes.filter(state=state).order_by("index")
                 .values_list("hostname", flat=True)) if 0 < count <= MAX_STATE_HOSTLIST else []
        rows.append({"state": state, "count": count, "hostlist": hostlists.compress(names),
                     "too_many": count > MAX_STATE_HOSTLIST})
    return rows


def state_change_impact(nodes: list[Node]) -> dict:
    """What a drain or down would hit: nodes already in a state, and the jobs holding some."""
    ids = [n.pk for n in nodes]
    held: dict[int, list[str]] = {}
    names = {n.pk: n.hostname for n in nodes}
    for start in range(0, len(ids), 900):
        for node_id, job_id in Allocation.objects.filter(
                node_id__in=ids[start:start + 900], released_at__isnull=True).values_list(
                "node_id", "job_id"):
            held.setdefault(job_id, []).append(names[node_id])
    jobs = {j.pk: j for j in Job.objects.filter(pk__in=held).select_related("owner")}
    return {
        "count": len(nodes),
        "hostlist": hostlists.compress(n.hostname for n in nodes),
        "by_state": {state: sum(1 for n in nodes if n.state == state)
                     for state in NodeState.values},
        "jobs": [{"job": jobs[job_id], "count": len(hosts),
                  "hostlist": hostlists.compress(hosts)}
                 for job_id, hosts in sorted(held.items())],
    }
