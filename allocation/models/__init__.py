"""Allocation models, split by topic and re-exported here."""

from allocation.models.jobs import Allocation, AllocationRole, CommPattern, Job, JobStatus
from allocation.models.machines import Machine, Node, NodeState

__all__ = [
    "Allocation",
    "AllocationRole",
    "CommPattern",
    "Job",
    "JobStatus",
    "Machine",
    "Node",
    "NodeState",
]
