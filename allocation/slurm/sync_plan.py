"""What a sync with Slurm must change in the portal (pure: records in, a plan out).

The service reads the portal's side (nodes, the jobs it already knows from
Slurm, who holds each node) and Slurm's side (:class:`SlurmNode`,
:class:`SlurmJob`), hands both here, and writes the :class:`SyncPlan` in one
transaction. Slurm is the truth: its node states and drain reasons replace the
portal's, each Slurm job becomes (or updates) one portal job holding exactly its
Slurm nodes, a finished job frees its nodes at its real end time, and a node
Slurm gives to a job is taken from a portal-only job that still claimed it.

The plan is idempotent: planned against its own result, it changes nothing.

>>> from allocation.slurm.records import SlurmNode
>>> plan = plan_sync(
...     portal_nodes={"n1": ("up", ""), "n2": ("up", "")}, known_jobs={}, holders={},
...     slurm_nodes=[SlurmNode("n1", "idle", frozenset({"DRAIN"}), reason="ECC")],
...     slurm_jobs=[], max_jobs=100)
>>> plan.node_states
{'n1': ('drained', 'ECC')}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from allocation.slurm.records import SlurmJob, SlurmNode

# The portal's job statuses and node states, as stored (allocation.choices
# holds the same values; a test keeps the two in step).
PENDING, RUNNING, COMPLETED, FAILED, CANCELLED = (
    "pending", "running", "completed", "failed", "cancelled")
UP, DRAINED, DOWN = "up", "drained", "down"

_LAST = datetime.max.replace(tzinfo=UTC)
_CANCELLED_STATES = frozenset({"CANCELLED", "PREEMPTED", "REVOKED"})
_PENDING_STATES = frozenset({"PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED"})


def portal_status(job: SlurmJob) -> str:
    """The portal status of a Slurm job state.

    >>> from allocation.slurm.records import SlurmJob
    >>> [portal_status(SlurmJob(1, "j", "u", s, (), 1, "p", None, None, None, None, None,
    ...  None)) for s in ("PENDING", "RUNNING", "COMPLETED", "TIMEOUT", "CANCELLED")]
    ['pending', 'running', 'completed', 'failed', 'cancelled']
    """
    if job.state == "COMPLETED":
        return COMPLETED
    if job.state in _CANCELLED_STATES:
        return CANCELLED
    if job.finished:
        return FAILED
    if job.state in _PENDING_STATES or (not job.active and not job.nodes):
        return PENDING
    return RUNNING


def node_state(node: SlurmNode) -> tuple[str, str]:
    """(portal state, reason) of a Slurm node: drained when Slurm drains it (or
    drains it while a job finishes), down when Slurm has it down, else up."""
    if node.drain:
        return DRAINED, node.reason or "drained in Slurm"
    if node.down:
        return DOWN, node.reason or "down in Slurm"
    return UP, ""


@dataclass(frozen=True)
class KnownJob:
    """A portal job linked to a Slurm job id, as the portal holds it now."""

    pk: int
    status: str
    slurm_state: str
    nodes: frozenset[str]
    #: Placed by the portal and submitted pinned: its nodes stay its own while
    #: Slurm still has it pending (Slurm will start it on exactly those).
    pinned: bool = False


@dataclass
class SyncPlan:
    """Changes for the portal. ``upserts`` are Slurm jobs to create or update (with
    the nodes each holds after the sync); ``releases`` map a portal job pk to the
    hostnames it gives up and when; ``evictions`` are portal-only jobs that lose
    nodes Slurm gave to a Slurm job; ``vanished`` are jobs the portal linked to
    Slurm that Slurm no longer knows (finished unseen); ``deferred`` counts the
    jobs left for the next run."""

    node_states: dict[str, tuple[str, str]] = field(default_factory=dict)
    upserts: list[SlurmJob] = field(default_factory=list)
    releases: dict[int, tuple[frozenset[str], datetime | None]] = field(default_factory=dict)
    evictions: dict[int, frozenset[str]] = field(default_factory=dict)
    vanished: list[int] = field(default_factory=list)
    unknown_nodes: list[str] = field(default_factory=list)
    deferred: int = 0

    @property
    def changes(self) -> int:
        return (len(self.node_states) + len(self.upserts) + len(self.releases)
                + len(self.evictions) + len(self.vanished))


def _bounded(jobs: Iterable[SlurmJob], known: Mapping[int, KnownJob],
             max_jobs: int) -> tuple[list[SlurmJob], int]:
    """The jobs this run handles: every job that holds or waits for nodes first (they
    define the occupancy), then finished ones the portal still shows holding nodes
    (their release frees nodes live jobs may need), then the other finished ones
    the portal does not have as finished yet, oldest end first; unchanged
    finished jobs are skipped outright."""
    live, ended = [], []
    for job in jobs:
        if not job.finished:
            live.append(job)
            continue
        mine = known.get(job.job_id)
        if mine is None or mine.slurm_state != job.state or mine.nodes:
            ended.append(job)

    def order(job: SlurmJob) -> tuple:
        holding = bool(known[job.job_id].nodes) if job.job_id in known else False
        return (not holding, job.end_time is None, job.end_time or _LAST, job.job_id)

    ended.sort(key=order)
    chosen = live + ended
    return chosen[:max_jobs], max(len(chosen) - max_jobs, 0)


def merge_jobs(current: Iterable[SlurmJob], history: Iterable[SlurmJob]) -> list[SlurmJob]:
    """One record per job id: slurmctld's current view, else accounting's."""
    merged = {job.job_id: job for job in history}
    merged.update({job.job_id: job for job in current})
    return sorted(merged.values(), key=lambda j: j.job_id)


def plan_sync(*, portal_nodes: Mapping[str, tuple[str, str]], known_jobs: Mapping[int, KnownJob],
              holders: Mapping[str, int], slurm_nodes: Iterable[SlurmNode],
              slurm_jobs: Iterable[SlurmJob], max_jobs: int,
              partition: str = "", complete: bool = True) -> SyncPlan:
    """Plan one sync of a machine.

    ``portal_nodes``: hostname -> (state, reason) of every node of the machine;
    ``known_jobs``: Slurm job id -> :class:`KnownJob` for the jobs the portal
    already linked; ``holders``: hostname -> pk of the portal job holding it now;
    ``partition``: only Slurm nodes and jobs of this partition (empty: all);
    ``complete``: Slurm's job list is the whole truth, so a linked job missing
    from it has ended (False when the list may be partial). A node or job on a
    node the machine does not have stops the plan (``unknown_nodes``).
    """
    plan = SyncPlan()
    nodes = [n for n in slurm_nodes if not partition or partition in n.partitions]
    jobs = [j for j in slurm_jobs if not partition or j.partition == partition]
    plan.unknown_nodes = sorted({n.name for n in nodes if n.name not in portal_nodes}
                                | {h for j in jobs for h in j.nodes if h not in portal_nodes})
    if plan.unknown_nodes:
        return plan
    for node in nodes:
        wanted = node_state(node)
        if portal_nodes[node.name] != wanted:
            plan.node_states[node.name] = wanted
    _plan_jobs(plan, jobs, known_jobs, holders, max_jobs)
    if complete:
        seen = {j.job_id for j in jobs}
        plan.vanished = sorted(k.pk for sid, k in known_jobs.items()
                               if sid not in seen and k.status in (PENDING, RUNNING))
    return plan


def _plan_jobs(plan: SyncPlan, jobs: list[SlurmJob], known_jobs: Mapping[int, KnownJob],
               holders: Mapping[str, int], max_jobs: int) -> None:
    """Upserts, releases (shrunk or finished jobs) and evictions of portal-only
    holders of nodes that Slurm jobs hold."""
    chosen, plan.deferred = _bounded(jobs, known_jobs, max_jobs)
    slurm_pks = {k.pk for k in known_jobs.values()}
    claimed: dict[str, int | None] = {}
    for job in chosen:
        plan.upserts.append(job)
        mine = known_jobs.get(job.job_id)
        holds = frozenset(job.nodes) if job.active else frozenset()
        if mine is not None and mine.pinned and job.pending:
            holds = mine.nodes
        if mine is not None and mine.nodes - holds:
            plan.releases[mine.pk] = (mine.nodes - holds, job.end_time)
        for host in holds:
            claimed[host] = mine.pk if mine is not None else None
    for host, pk in claimed.items():
        holder = holders.get(host)
        # Free, held by this very job, or by another Slurm job (whose own release
        # or vanishing frees it): nothing to take from a portal-only job.
        if holder is None or holder == pk or holder in slurm_pks:
            continue
        plan.evictions[holder] = plan.evictions.get(holder, frozenset()) | {host}
