"""The write path for jobs and allocations, and the read-side bridge to the
pure allocation core (occupancy -> ``allocation.hyperx`` -> rows).

No double allocation: every allocation on a machine locks the machine row
first (``select_for_update``), which serialises allocations per machine on
PostgreSQL; the chosen node rows are locked too, and the partial unique
constraint ``allocation_one_active_per_node`` makes a second active allocation
of one node impossible even if a code path forgot the lock. On SQLite the
IMMEDIATE transaction mode takes the database write lock up front instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from allocation import slurm_topology
from allocation.hyperx import (
    BASELINE_POLICY,
    ONLINE_POLICIES,
    POLICIES,
    AllocationError,
    HyperX,
    allocate,
    partition_properties,
    static_partition,
)
from allocation.hyperx.patterns import canonical_pattern
from allocation.models import Allocation, AllocationRole, Job, JobStatus, Machine, Node, NodeState
from allocation.services.machines import resolve_hostlist
from hxportal import hostlists
from hxportal.errors import ConflictError

MAX_SEED = 2**63 - 1
__all__ = ["BASELINE_POLICY", "ONLINE_POLICIES", "POLICIES"]  # for forms and API choices


@dataclass(frozen=True)
class Candidate:
    """One policy's proposed partition on the current occupancy (nothing written)."""

    policy: str
    seed: int
    endpoints: tuple[int, ...] = ()
    hostnames: tuple[str, ...] = ()
    properties: dict = field(default_factory=dict)
    error: str = ""

    @property
    def hostlist(self) -> str:
        return hostlists.compress(self.hostnames)

    def as_dict(self) -> dict:
        return {"policy": self.policy, "seed": self.seed, "size": len(self.endpoints),
                "hostlist": self.hostlist, "properties": self.properties or None,
                "error": self.error or None}


class PartitionTaken(ConflictError):
    """A proposed partition lost a node between the proposal and the allocation."""


def topology_of(machine: Machine) -> HyperX:
    return HyperX(tuple(machine.sides), machine.concentration)


def occupancy(machine: Machine) -> tuple[np.ndarray, np.ndarray]:
    """(available mask over endpoints, owning job id per endpoint or 0)."""
    n = machine.node_count
    up = np.zeros(n, dtype=bool)
    up_indices = np.fromiter(
        machine.nodes.filter(state=NodeState.UP).values_list("index", flat=True), dtype=np.int64)
    up[up_indices] = True
    owner = np.zeros(n, dtype=np.int64)
    # One plain fetch: a server-side cursor (.iterator()) costs three round trips
    # on PostgreSQL, and even 65,536 (index, job) pairs are only a few MB.
    held = np.array(Allocation.objects.filter(
        node__machine=machine, released_at__isnull=True).values_list("node__index", "job_id"),
        dtype=np.int64).reshape(-1, 2)
    owner[held[:, 0]] = held[:, 1]
    return up & (owner == 0), owner


def check_node_count(machine: Machine, node_count: object) -> int:
    """The one check of a job's node count at the service boundary: forms, the API
    and the CLI hand it on under this name (``size`` at the preview and compare edge
    is mapped there), and the allocator below trusts it."""
    if isinstance(node_count, bool) or not isinstance(node_count, int) or node_count < 1:
        raise ValidationError({"node_count": ["must be an integer >= 1"]})
    if node_count > machine.node_count:
        raise ValidationError({"node_count": [
            f"the machine has only {machine.node_count} nodes"]})
    return node_count


def _validate_request(machine: Machine, policy: str, node_count: object,
                      seed: object) -> tuple[int, int]:
    if policy not in ONLINE_POLICIES:
        raise ValidationError({"policy": [f"unknown policy {policy!r}; use one of "
                                          f"{', '.join(ONLINE_POLICIES)}"]})
    node_count = check_node_count(machine, node_count)
    if seed is None:
        seed = 0
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ValidationError({"seed": ["must be an integer between 0 and 2^63-1"]})
    return node_count, seed


def _hostnames(machine: Machine, endpoints: np.ndarray) -> list[str]:
    by_index = dict(machine.nodes.filter(index__in=endpoints.tolist())
                    .values_list("index", "hostname")) if endpoints.size <= 900 else dict(
        machine.nodes.values_list("index", "hostname"))
    return [by_index[int(i)] for i in endpoints]


def formula_endpoints(machine: Machine, policy: str, node_count: int, index: int,
                      seed: int) -> np.ndarray:
    """The static formula's partition: 2D n x n machines with c = n, k*n^2 nodes only."""
    sides, c = tuple(machine.sides), machine.concentration
    if len(sides) != 2 or sides[0] != sides[1] or c != sides[0]:
        raise ValidationError({"mode": [
            f"the {policy} formula needs a 2D n x n machine with c = n; {machine.name} is "
            f"{machine.shape}"]})
    n = sides[0]
    if node_count % (n * n):
        raise ValidationError({"node_count": [
            f"the formula places multiples of n^2 = {n * n} nodes"]})
    try:
        return static_partition(policy, n, index, node_count // (n * n), seed)
    except ValueError as exc:
        raise ValidationError({"index": [str(exc)]}) from exc


def propose(machine: Machine, policy: str, node_count: int, seed: int | None = 0,
            available: np.ndarray | None = None, exact: bool | None = None,
            mode: str = "online", index: int = 0, busy: np.ndarray | None = None
            ) -> Candidate:
    """The partition ``policy`` would give a job of ``node_count`` nodes right now.

    ``mode`` "online" chooses among free healthy nodes; "formula" takes the
    static formula's partition ``index`` and fails when any of it is taken.
    """
    node_count, seed = _validate_request(machine, policy, node_count, seed)
    if available is None:
        available, owner = occupancy(machine)
        busy = owner > 0
    topology = topology_of(machine)
    if mode == "formula":
        if policy not in POLICIES:
            raise ValidationError({"policy": [f"{policy} has no static formula"]})
        endpoints = formula_endpoints(machine, policy, node_count, index, seed)
        taken = int(np.count_nonzero(~available[endpoints]))
        if taken:
            return Candidate(policy=policy, seed=seed, error=(
                f"{taken} nodes of formula partition {index} are held or not up"))
    elif mode != "online":
        raise ValidationError({"mode": ["must be online or formula"]})
    else:
        return _online_candidate(machine, topology, policy, node_count, seed, available, busy,
                                 exact)
    return _candidate(machine, topology, policy, seed, endpoints, exact)


def _online_candidate(machine: Machine, topology: HyperX, policy: str, node_count: int,
                      seed: int, available: np.ndarray, busy: np.ndarray | None,
                      exact: bool | None = None) -> Candidate:
    """``policy``'s online partition of a node count already checked."""
    try:
        endpoints = allocate(topology, available, policy, node_count, seed=seed, busy=busy)
    except AllocationError as exc:
        return Candidate(policy=policy, seed=seed, error=exc.reason)
    return _candidate(machine, topology, policy, seed, endpoints, exact)


def _candidate(machine: Machine, topology: HyperX, policy: str, seed: int,
               endpoints: np.ndarray, exact: bool | None) -> Candidate:
    props = partition_properties(topology, endpoints, exact=exact).as_dict()
    return Candidate(policy=policy, seed=seed, endpoints=tuple(int(e) for e in endpoints),
                     hostnames=tuple(_hostnames(machine, endpoints)), properties=props)


def propose_around(machine: Machine, policy: str, fixed: Sequence[int], extra: int,
                   seed: int, available: np.ndarray, busy: np.ndarray,
                   properties: bool = True) -> Candidate:
    """The partition of the ``fixed`` endpoints, kept as they are (the partition a
    recommendation simulated), plus ``extra`` more that ``policy`` chooses among the
    other available ones (its spares). The candidate's error says why not, when
    ``fixed`` is no longer free or the extra nodes do not fit. ``properties``
    False: the nodes only (no partition properties computed)."""
    fixed_array = np.asarray(fixed, dtype=np.int64)
    if fixed_array.size == 0 or not available[fixed_array].all():
        return Candidate(policy=policy, seed=seed, error="the partition is no longer free")
    rest = available.copy()
    rest[fixed_array] = False
    chosen = fixed_array
    if extra:
        try:
            more = allocate(topology_of(machine), rest, policy, extra, seed=seed,
                            busy=busy | np.isin(np.arange(busy.size), fixed_array))
        except AllocationError as exc:
            return Candidate(policy=policy, seed=seed, error=exc.reason)
        chosen = np.concatenate([fixed_array, more])
    props = partition_properties(topology_of(machine), chosen).as_dict() if properties else {}
    return Candidate(policy=policy, seed=seed, endpoints=tuple(int(e) for e in chosen),
                     hostnames=tuple(_hostnames(machine, chosen)), properties=props)


def compare_policies(machine: Machine, node_count: int, seed: int | None = 0,
                     snapshot: tuple[np.ndarray, np.ndarray] | None = None) -> list[Candidate]:
    """Every policy's candidate for ``node_count`` nodes on the same occupancy snapshot
    (``snapshot``: an :func:`occupancy` the caller already read, else read now)."""
    node_count, seed = _validate_request(machine, POLICIES[0], node_count, seed)
    available, owner = snapshot if snapshot is not None else occupancy(machine)
    topology = topology_of(machine)
    return [_online_candidate(machine, topology, policy, node_count, seed, available, owner > 0)
            for policy in ONLINE_POLICIES]


def hostlist_properties(machine: Machine, hostlist: str, exact: bool | None = None) -> dict:
    """Partition properties of any set of the machine's nodes."""
    nodes = resolve_hostlist(machine, hostlist)
    endpoints = np.array([n.index for n in nodes], dtype=np.int64)
    props = partition_properties(topology_of(machine), endpoints, exact=exact).as_dict()
    return {"machine": machine.name, "hostlist": hostlists.compress(n.hostname for n in nodes),
            **props}


@transaction.atomic
def create_job(*, owner, machine: Machine, name: str, node_count: int, pattern: str,
               external_id: str = "", t_cmpt: float | None = None,
               t_comm: float | None = None, wall_time: float | None = None) -> Job:
    check_node_count(machine, node_count)
    job = Job(owner=owner, machine=machine, name=name, node_count=node_count,
              pattern=canonical_pattern(pattern),
              external_id=external_id, t_cmpt=t_cmpt, t_comm=t_comm, wall_time=wall_time)
    job.full_clean()
    job.save()
    return job


@transaction.atomic
def submit_job(*, owner, machine: Machine, name: str, node_count: int, pattern: str,
               external_id: str = "", t_cmpt: float | None = None, t_comm: float | None = None,
               wall_time: float | None = None, policy: str | None = None, seed: int = 0,
               spares: int = 0) -> Job:
    """Create a job and, when ``policy`` is given, allocate it in the same transaction
    (a job that cannot be placed is not left behind)."""
    job = create_job(owner=owner, machine=machine, name=name, node_count=node_count,
                     pattern=pattern, external_id=external_id, t_cmpt=t_cmpt, t_comm=t_comm,
                     wall_time=wall_time)
    if policy:
        job = allocate_job(job, policy, seed, spares)
    return job


def allocate_job(job: Job, policy: str, seed: int | None = 0,
                 spares: int = 0, mode: str = "online", index: int = 0) -> Job:
    """Place ``job`` with ``policy``: all its nodes or none, never a node twice.

    ``spares`` extra nodes are allocated with the role ``spare`` (the spare-node
    method drops the slowest after a benchmark).
    """
    try:
        with transaction.atomic():
            return _allocate_locked(job, policy, seed, spares, mode, index)
    except IntegrityError as exc:
        raise ConflictError("another allocation took some of these nodes; retry") from exc


def _allocate_locked(job: Job, policy: str, seed: int | None, spares: int, mode: str,
                     index: int) -> Job:
    machine = Machine.objects.select_for_update().get(pk=job.machine_id)
    job = Job.objects.select_for_update().get(pk=job.pk)
    if job.status != JobStatus.PENDING:
        raise ConflictError(f"job {job.pk} is {job.status}, not pending", field="status")
    if isinstance(spares, bool) or not isinstance(spares, int) or spares < 0:
        raise ValidationError({"spares": ["must be an integer >= 0"]})
    total = job.node_count + spares
    candidate = propose(machine, policy, total, seed, mode=mode, index=index)
    if candidate.error:
        # Online, the only refusal is too few free nodes: a problem of the job's size
        # (with its spares), not of the policy; a formula partition is the policy's.
        field = "node_count" if mode == "online" else "policy"
        spare_text = f" ({job.node_count} + {spares} spare)" if spares else ""
        raise ValidationError({field: [f"{policy} cannot place {total} nodes{spare_text}: "
                                       f"{candidate.error}"]})
    return _place(job, machine, candidate)


def _place(job: Job, machine: Machine, candidate: Candidate) -> Job:
    """Write ``candidate`` as the job's allocation (first ``node_count`` primary, the
    rest spare); the caller holds the machine and job locks."""
    nodes = {n.index: n for n in Node.objects.select_for_update().filter(
        machine=machine, index__in=candidate.endpoints)} if len(candidate.endpoints) <= 900 \
        else {n.index: n for n in Node.objects.select_for_update().filter(machine=machine)}
    now = timezone.now()
    rows = []
    for rank, index in enumerate(candidate.endpoints):
        node = nodes[index]
        if node.state != NodeState.UP:
            raise ConflictError(f"node {node.hostname} is {node.state}; retry")
        role = AllocationRole.PRIMARY if rank < job.node_count else AllocationRole.SPARE
        rows.append(Allocation(job=job, node=node, role=role, rank=rank, created_at=now))
    Allocation.objects.bulk_create(rows, batch_size=5000)
    job.status = JobStatus.ALLOCATED
    job.policy = candidate.policy
    job.seed = candidate.seed
    job.properties = candidate.properties
    job.allocated_at = now
    job.save(update_fields=["status", "policy", "seed", "properties", "allocated_at"])
    return job


def allocate_candidate(job: Job, candidate: Candidate) -> Job:
    """Allocate exactly ``candidate``'s nodes (a partition proposed and checked
    beforehand, e.g. against Slurm); :class:`ConflictError` when one was taken,
    drained or downed meanwhile: nothing is written, and the caller proposes again."""
    try:
        with transaction.atomic():
            machine = Machine.objects.select_for_update().get(pk=job.machine_id)
            job = Job.objects.select_for_update().get(pk=job.pk)
            if job.status != JobStatus.PENDING:
                raise ConflictError(f"job {job.pk} is {job.status}, not pending",
                                    field="status")
            available, _ = occupancy(machine)
            taken = [e for e in candidate.endpoints if not available[e]]
            if taken:
                raise PartitionTaken(f"{len(taken)} of the proposed nodes were taken "
                                     "meanwhile; propose again")
            return _place(job, machine, candidate)
    except IntegrityError as exc:
        raise ConflictError("another allocation took some of these nodes; retry") from exc


@transaction.atomic
def start_job(job: Job) -> Job:
    job = Job.objects.select_for_update().get(pk=job.pk)
    if job.status != JobStatus.ALLOCATED:
        raise ConflictError(f"job {job.pk} is {job.status}, not allocated", field="status")
    job.status = JobStatus.RUNNING
    job.save(update_fields=["status"])
    return job


@transaction.atomic
def finish_job(job: Job, status: str = JobStatus.COMPLETED,
               actual_runtime: float | None = None) -> Job:
    """Complete, fail or cancel a job and free its nodes; finishing twice is a conflict."""
    if status not in JobStatus.terminal():
        raise ValidationError({"status": [
            f"must be one of {', '.join(sorted(JobStatus.terminal()))}"]})
    job = Job.objects.select_for_update().get(pk=job.pk)
    if job.status in JobStatus.terminal():
        raise ConflictError(f"job {job.pk} is already {job.status}", field="status")
    now = timezone.now()
    job.allocations.filter(released_at__isnull=True).update(released_at=now)
    job.status = status
    job.finished_at = now
    if actual_runtime is not None:
        job.actual_runtime = actual_runtime
    job.save(update_fields=["status", "finished_at", "actual_runtime"])
    return job


@transaction.atomic
def record_submission(job: Job, slurm_job_id: int) -> Job:
    """Link a portal job to the Slurm job that runs it (reported by its submitter);
    the same id again is fine, another id or an id another job has is a conflict."""
    job = Job.objects.select_for_update().get(pk=job.pk)
    if job.slurm_job_id == slurm_job_id:
        return job
    if job.slurm_job_id is not None:
        raise ConflictError(f"job {job.pk} already runs as Slurm job {job.slurm_job_id}",
                            field="slurm_job_id")
    other = Job.objects.filter(machine_id=job.machine_id, slurm_job_id=slurm_job_id).first()
    if other is not None:
        raise ConflictError(f"Slurm job {slurm_job_id} is already portal job {other.pk}",
                            field="slurm_job_id")
    job.slurm_job_id = slurm_job_id
    job.save(update_fields=["slurm_job_id"])
    return job


def job_hostlists(job: Job) -> dict[str, str]:
    """The job's nodes per role as compressed hostlists."""
    return jobs_hostlists([job.pk])[job.pk]


#: Job ids per query of :func:`jobs_hostlists` (below SQLite's 999 parameters).
HOSTLIST_BATCH = 900


def jobs_hostlists(job_ids: list[int]) -> dict[int, dict[str, str]]:
    """Each job's nodes per role as compressed hostlists, in one query per 900 jobs
    (a list page reads every row's hostlists at once, not one query per row)."""
    names: dict[int, dict[str, list[str]]] = {
        pk: {role: [] for role in AllocationRole.values} for pk in job_ids}
    for start in range(0, len(job_ids), HOSTLIST_BATCH):
        rows = (Allocation.objects.filter(job_id__in=job_ids[start:start + HOSTLIST_BATCH])
                .order_by("job_id", "rank").values_list("job_id", "role", "node__hostname"))
        for job_id, role, hostname in rows:
            names[job_id][role].append(hostname)
    return {pk: {role: hostlists.compress(hosts) for role, hosts in roles.items()}
            for pk, roles in names.items()}


def topology_file(machine: Machine, kind: str) -> str:
    """The machine's Slurm topology in ``kind`` (tree, block or features) form."""
    names = list(machine.nodes.order_by("index").values_list("hostname", flat=True))
    try:
        return slurm_topology.render(kind, machine.name, machine.sides, machine.concentration,
                                     names)
    except ValueError as exc:
        raise ValidationError({"kind": [str(exc)]}) from exc
