"""What one scrape reads, as plain values: the services fill it, the collector
turns it into metric families. No Django here, so the collector's output can be
tested from hand-made readings."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class MachineReading:
    """Occupancy of one machine."""

    machine: str
    nodes_by_state: dict[str, int]
    allocated: int
    free: int
    switches: int
    whole_free_switches: int


@dataclass(frozen=True)
class HealthReading:
    """One machine's health snapshot; ``candidates_up`` is read live."""

    machine: str
    benchmark: str
    age_seconds: float
    node_runs: int
    candidates: int
    candidates_up: int
    watch: int
    duration_seconds: float


@dataclass(frozen=True)
class EstimateReading:
    """The newest estimate of one machine and benchmark."""

    machine: str
    benchmark: str
    p_abn: float
    p_abn_low: float
    p_abn_high: float
    confidence: float
    alpha_abn: float | None
    alpha_abn_low: float | None
    alpha_abn_high: float | None
    t_bench: float
    node_runs: int
    abnormal_runs: int
    age_seconds: float


@dataclass(frozen=True)
class LatencyReading:
    """Answered recommendations of one machine and method: cumulative bucket counts
    (``le`` seconds, count), their number and total latency."""

    machine: str
    method: str
    buckets: tuple[tuple[float, int], ...]
    count: int
    total_seconds: float


@dataclass(frozen=True)
class SlurmReading:
    """A machine's Slurm link and how its syncs went."""

    machine: str
    enabled: bool
    age_seconds: float | None
    consecutive_failures: int
    failing: bool
    failures_total: int
    syncs_total: int
    last_duration_seconds: float | None


@dataclass(frozen=True)
class QueueReading:
    """Messages waiting in each Celery queue; ``reachable`` False when the broker did
    not answer (then ``lengths`` is empty)."""

    reachable: bool
    lengths: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Readings:
    """Everything one scrape exposes."""

    machines: list[MachineReading]
    health: list[HealthReading]
    estimates: list[EstimateReading]
    recommendations: dict[tuple[str, str], int]  # (machine, status) -> count
    latency: list[LatencyReading]
    slurm: list[SlurmReading]
    queues: QueueReading
    node_states: tuple[str, ...] = ()
    recommendation_statuses: tuple[str, ...] = ()
    simulation_runs: dict[str, int] = field(default_factory=dict)  # status -> count
    simulation_statuses: tuple[str, ...] = ()
    #: Unfinished runs that have continued from a checkpoint at least once.
    simulation_runs_continuing: int = 0
