"""Allocation models (machines, nodes, jobs, site settings), split by topic and re-exported."""

from allocation.models.jobs import Allocation, AllocationRole, CommPattern, Job, JobStatus
from allocation.models.machines import Machine, Node, NodeState
from allocation.models.site import SiteSettings
from allocation.models.slurm import NodeEvent, SlurmLink

__all__ = [
    "Allocation",
    "AllocationRole",
    "CommPattern",
    "Job",
    "JobStatus",
    "Machine",
    "Node",
    "NodeEvent",
    "NodeState",
    "SiteSettings",
    "SlurmLink",
]
