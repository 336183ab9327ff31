"""The reads behind the switch grid (``allocation/grid.py``): which nodes a plane
holds, which jobs hold them, how many nodes are in each state. The grid draws what
these return and reads nothing itself (``Machine`` is here for its signatures)."""

from __future__ import annotations

from django.db.models import Count

from allocation.models import Allocation, Job, JobStatus, Machine, NodeState
from allocation.services import queries
from hxportal import ownership

__all__ = ["Machine", "NodeRow", "active_allocations", "held_per_job", "job_switches",
           "jobs_on_machine", "past_roles", "plane_nodes", "state_counts"]

#: (id, switch, local, hostname, state, state_reason) of one node.
NodeRow = tuple[int, int, int, str, str, str]


def plane_nodes(machine: Machine, start: int, end: int) -> list[NodeRow]:
    """The nodes on switches ``start`` .. ``end - 1``, in node order."""
    return list(machine.nodes.filter(switch__gte=start, switch__lt=end).order_by("index")
                .values_list("id", "switch", "local", "hostname", "state", "state_reason"))


def active_allocations(machine: Machine, start: int, end: int) -> dict[int, tuple[int, str]]:
    """node id -> (job id, role) of the active allocations on switches ``start`` .. ``end - 1``."""
    return {node_id: (job_id, role) for node_id, job_id, role in Allocation.objects.filter(
        node__machine=machine, released_at__isnull=True, node__switch__gte=start,
        node__switch__lt=end).values_list("node_id", "job_id", "role")}


def state_counts(machine: Machine) -> dict[str, int]:
    """Nodes per state over the whole machine (every state, zeros included), and
    ``held_not_up``: how many drained or down nodes a job holds."""
    per_state = dict(machine.nodes.values_list("state").annotate(n=Count("id")).order_by())
    held_bad = (Allocation.objects.filter(node__machine=machine, released_at__isnull=True)
                .exclude(node__state=NodeState.UP).values("node_id").distinct().count())
    return {**{s: per_state.get(s, 0) for s in NodeState.values}, "held_not_up": held_bad}


def jobs_on_machine(machine: Machine, reader) -> tuple[list[Job], set[int]]:
    """The jobs holding nodes now, and the ids of those ``reader`` may see
    (``HX_PRIVATE_DATA``: their own; None: every one)."""
    active = list(queries.active_jobs(machine))
    everything = reader is None or ownership.reads_everything(reader)
    shown = {j.pk for j in active if everything or j.owner_id == reader.pk}
    return active, shown


def held_per_job(machine: Machine) -> dict[int, int]:
    """job id -> how many nodes it holds now, over the whole machine."""
    return dict(Allocation.objects.filter(job__machine=machine, released_at__isnull=True)
                .values_list("job_id").annotate(n=Count("id")).order_by())


def job_switches(job: Job) -> list[int]:
    """The switches of the job's held nodes; a finished job: of every node it held."""
    return list(job.allocations.filter(released_at__isnull=True).values_list(
        "node__switch", flat=True)) or list(job.allocations.values_list("node__switch",
                                                                         flat=True))


def past_roles(job: Job, start: int, end: int) -> dict[int, str]:
    """node id -> role of a finished job's allocations on switches ``start`` .. ``end - 1``
    (where it ran); empty while the job holds nodes."""
    if job.status in JobStatus.holding_nodes():
        return {}
    return dict(job.allocations.filter(node__switch__gte=start, node__switch__lt=end)
                .values_list("node_id", "role"))
