"""Allocation models, split by topic and re-exported here."""

from allocation.models.benchmarks import BenchmarkResult, Estimate, EstimationRun
from allocation.models.jobs import Allocation, AllocationRole, CommPattern, Job, JobStatus
from allocation.models.machines import Machine, Node, NodeState
from allocation.models.recommendations import (
    PolicyPrediction,
    Recommendation,
    RecommendationMethod,
    RecommendationStatus,
)
from allocation.models.site import SiteSettings

__all__ = [
    "Allocation",
    "AllocationRole",
    "BenchmarkResult",
    "CommPattern",
    "Estimate",
    "EstimationRun",
    "Job",
    "JobStatus",
    "Machine",
    "Node",
    "NodeState",
    "PolicyPrediction",
    "Recommendation",
    "RecommendationMethod",
    "RecommendationStatus",
    "SiteSettings",
]
