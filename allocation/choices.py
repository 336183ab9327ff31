"""The allocation app's enumerations (stored values and their labels), used by
models, forms, filters, serializers and services alike."""

from __future__ import annotations

from django.db import models

from allocation.hyperx import patterns


class CommPattern(models.TextChoices):
    """A job's communication pattern, named as the simulator names it (one
    vocabulary: ``simulation.engine.config.PATTERNS``); the hyphenated names
    of earlier versions (``all-to-all``, ``stencil-4``, ...) are accepted on
    input as aliases (:func:`allocation.pattern_fields.canonical`)."""

    ALL_TO_ALL = patterns.ALL2ALL, "All-to-all"
    ALL_REDUCE = patterns.ALLREDUCE, "All-reduce"
    STENCIL_4 = patterns.STENCIL4, "Stencil (4 neighbours)"
    STENCIL_8 = patterns.STENCIL8, "Stencil (8 neighbours)"
    RANDOM_INVOLUTION = patterns.RANDOM_INVOLUTION, "Random involution"
    UNIFORM = patterns.UNIFORM, "Uniform"
    UNKNOWN = "unknown", "Unknown"


class JobStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    ALLOCATED = "allocated", "Allocated"
    RUNNING = "running", "Running"
    COMPLETED = "completed", "Completed"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"

    @classmethod
    def holding_nodes(cls) -> frozenset[str]:
        return frozenset({cls.ALLOCATED, cls.RUNNING})

    @classmethod
    def terminal(cls) -> frozenset[str]:
        return frozenset({cls.COMPLETED, cls.FAILED, cls.CANCELLED})


class JobSource(models.TextChoices):
    """Where the portal learned of a job: submitted through the portal, read from
    Slurm by the sync (a plain ``sbatch``), or made up by ``hx_demo`` as the demo
    machine's history when no Slurm feeds it (shown as synthetic wherever it counts)."""

    PORTAL = "portal", "Portal"
    SLURM = "slurm", "Slurm"
    SYNTHETIC = "demo", "Synthetic (demo)"


class NodeEventSource(models.TextChoices):
    """Who changed a node's state: an operator in the portal (carried out in Slurm
    when the machine is linked to it), or Slurm itself, seen by the sync."""

    PORTAL = "portal", "Portal"
    SLURM = "slurm", "Slurm"


class AllocationRole(models.TextChoices):
    PRIMARY = "primary", "Primary"
    SPARE = "spare", "Spare"
    EXCLUDED = "excluded", "Excluded"


class NodeState(models.TextChoices):
    UP = "up", "Up"
    DRAINED = "drained", "Drained"
    DOWN = "down", "Down"
