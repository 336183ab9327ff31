"""Result records of a simulation (plain, JSON-ready through ``as_dict``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Changes whenever the model changes results (the portal reuses a stored
#: result only for the same configuration, partitions and version).
ENGINE_VERSION = "2.4"

__all__ = ["ENGINE_VERSION", "AppResult", "SimResult"]


@dataclass(frozen=True)
class AppResult:
    """Outcome of one application (or of the background traffic).

    Attributes
    ----------
    policy : str
        Allocation policy of the partition (``config.policy``;
        ``'background'`` for background traffic).
    role : str
        ``'app'`` or ``'background'``.
    pattern : str
        Traffic pattern or kernel.
    partition : tuple of int
        Endpoint ids in rank order.
    completion_cycles : int or None
        Cycle at which the last packet was delivered (``None`` when the
        application has no finite amount of work or did not finish).
    packets : int
        Packets delivered.
    packets_injected : int
        Packets created by its ranks.
    offered, throughput : float
        Offered and accepted load in phits/cycle/endpoint over the
        measurement window.
    latency_mean : float or None
        Mean packet latency in cycles (packets generated in the window).
    latency_max : int or None
        Largest packet latency in the window.
    """

    policy: str
    role: str
    pattern: str
    partition: tuple[int, ...]
    completion_cycles: int | None
    packets: int
    packets_injected: int
    offered: float
    throughput: float
    latency_mean: float | None
    latency_max: int | None

    def as_dict(self) -> dict[str, Any]:
        """Plain dictionary with native Python values."""
        return {
            "policy": self.policy,
            "role": self.role,
            "pattern": self.pattern,
            "partition": list(self.partition),
            "ranks": len(self.partition),
            "completion_cycles": self.completion_cycles,
            "packets": self.packets,
            "packets_injected": self.packets_injected,
            "offered": self.offered,
            "throughput": self.throughput,
            "latency_mean": self.latency_mean,
            "latency_max": self.latency_max,
        }


@dataclass(frozen=True)
class SimResult:
    """Outcome of :func:`simulation.engine.simulate`.

    Whole-run figures cover the applications (``role == 'app'``), not the
    background traffic, which has its own :class:`AppResult`.

    Attributes
    ----------
    config : dict
        The configuration (``SimConfig.to_dict()``).
    cycles : int
        Simulated cycles.
    completed : bool
        Every application with finite work finished before ``max_cycles``.
    makespan_cycles : int or None
        Largest completion cycle of the applications, when all finished.
    measure_from : int
        First cycle of the measurement window (``warmup_cycles`` for
        unbounded open-loop runs, else 0).
    throughput, offered : float
        Accepted and offered load, phits/cycle/endpoint, over the window.
    latency_mean, latency_p99 : float or None
        Packet latency (cycles) of packets generated in the window.
    packets_injected, packets_delivered, packets_dropped, packets_in_flight : int
        Whole-run counts over all traffic; dropped packets were offered to a
        full source queue (open loop, unbounded) and never entered it;
        ``injected == delivered + in_flight`` always holds.
    phit_hops : int
        Phits sent over switch-to-switch links in the whole run.
    link_utilisation : tuple of (int, int, float)
        Per directed switch link: source switch, destination switch and
        the fraction of window cycles it carried a phit.
    apps : tuple of AppResult
    """

    config: dict[str, Any]
    cycles: int
    completed: bool
    makespan_cycles: int | None
    measure_from: int
    throughput: float
    offered: float
    latency_mean: float | None
    latency_p99: float | None
    packets_injected: int
    packets_delivered: int
    packets_dropped: int
    packets_in_flight: int
    phit_hops: int
    link_utilisation: tuple[tuple[int, int, float], ...]
    apps: tuple[AppResult, ...] = field(default_factory=tuple)
    engine_version: str = ENGINE_VERSION

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dictionary (lists, ints, floats, ``None``)."""
        return {
            "engine_version": self.engine_version,
            "config": dict(self.config),
            "cycles": self.cycles,
            "completed": self.completed,
            "makespan_cycles": self.makespan_cycles,
            "measure_from": self.measure_from,
            "throughput": self.throughput,
            "offered": self.offered,
            "latency_mean": self.latency_mean,
            "latency_p99": self.latency_p99,
            "packets_injected": self.packets_injected,
            "packets_delivered": self.packets_delivered,
            "packets_dropped": self.packets_dropped,
            "packets_in_flight": self.packets_in_flight,
            "phit_hops": self.phit_hops,
            "link_utilisation": [list(x) for x in self.link_utilisation],
            "apps": [a.as_dict() for a in self.apps],
        }
