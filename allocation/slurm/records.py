"""What the Slurm client returns: plain frozen records, no Slurm text left to parse.

Times are timezone-aware UTC datetimes (or ``None`` when Slurm has none yet);
node lists are tuples of hostnames, never hostlist expressions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

#: How a job submitted for an accepted recommendation names its portal job.
PORTAL_JOB_TAG = re.compile(r"\bhxportal-job=(\d{1,18})\b")

#: Job states after which a job holds no node (Slurm's base job states).
FINISHED_STATES = frozenset({
    "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED",
    "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "REVOKED", "SPECIAL_EXIT"})
#: Job states in which a job holds its nodes (COMPLETING: the epilog still runs).
ACTIVE_STATES = frozenset({"RUNNING", "SUSPENDED", "COMPLETING", "CONFIGURING",
                           "STOPPED", "RESIZING", "SIGNALING", "STAGE_OUT"})


@dataclass(frozen=True)
class SlurmNode:
    """One node as slurmctld sees it.

    ``state`` is Slurm's base state in lower case (``idle``, ``allocated``,
    ``mixed``, ``down``, ``unknown``, ``future``); ``flags`` its state flags in
    upper case (``DRAIN``, ``NOT_RESPONDING``, ``COMPLETING``, ``MAINTENANCE``,
    ...). A drained node is ``state="idle", flags={"DRAIN"}``; right after a
    resume Slurm pings it, so ``NOT_RESPONDING`` shows for a second or two.
    """

    name: str
    state: str
    flags: frozenset[str]
    reason: str = ""
    reason_set_by: str = ""
    reason_changed_at: datetime | None = None
    partitions: tuple[str, ...] = ()

    @property
    def drain(self) -> bool:
        """Drained or draining: no new job lands here."""
        return "DRAIN" in self.flags

    @property
    def responding(self) -> bool:
        return "NOT_RESPONDING" not in self.flags and self.state not in ("unknown", "future")

    @property
    def down(self) -> bool:
        return self.state == "down"

    @property
    def idle(self) -> bool:
        """Free for a new job: idle, responding, not drained."""
        return self.state == "idle" and self.responding and not (
            self.flags & {"DRAIN", "COMPLETING", "MAINTENANCE", "RESERVED", "POWERED_DOWN"})

    @property
    def label(self) -> str:
        """Slurm's short label as ``sinfo`` prints it: ``drained``, ``draining``, ``idle*``..."""
        if self.drain:
            text = "draining" if self.state in ("allocated", "mixed") else "drained"
        else:
            text = self.state
        return text + ("*" if "NOT_RESPONDING" in self.flags else "")


@dataclass(frozen=True)
class SlurmJob:
    """One job (an allocation, not its steps).

    ``exit_code`` is the batch script's exit status and ``exit_signal`` the
    signal that ended it (both ``None`` until the job finished). ``end_time`` is
    ``None`` until the job finished (squeue's projected end is not kept).
    ``time_limit`` is in minutes, ``None`` for unlimited.
    """

    job_id: int
    name: str
    user: str
    state: str
    nodes: tuple[str, ...]
    num_nodes: int
    partition: str
    submit_time: datetime | None
    start_time: datetime | None
    end_time: datetime | None
    exit_code: int | None
    exit_signal: int | None
    time_limit: int | None
    reason: str = ""
    #: The job's ``--comment`` (squeue only; accounting keeps it only when the site
    #: stores comments): ``hxportal-job=<id>`` links a job the portal placed.
    comment: str = ""

    @property
    def portal_job(self) -> int | None:
        """The portal job id this Slurm job carries in its comment, if any."""
        match = PORTAL_JOB_TAG.search(self.comment)
        return int(match.group(1)) if match else None

    @property
    def finished(self) -> bool:
        return self.state in FINISHED_STATES

    @property
    def active(self) -> bool:
        """Holds nodes now."""
        return self.state in ACTIVE_STATES

    @property
    def pending(self) -> bool:
        return self.state == "PENDING"
