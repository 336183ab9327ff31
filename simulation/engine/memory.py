"""Peak memory of one run, estimated from its configuration before it runs.

A run's memory is its arrays: the input and output buffers of every VC of
every port (``ports x VCs x depth``), the endpoints' source queues, the event
wheels (``packet_phits + link_latency`` slots per port), per-port, per-VC and
per-rank state, and the packet pool. Nothing is recorded per cycle, so
``max_cycles`` matters only through the pool: no more packets can be in flight
than the buffers hold, nor than the ranks can inject in ``max_cycles`` (one
packet per ``packet_phits`` cycles each).

The estimate counts every array at its full size (numpy leaves untouched
pages unmapped, so a run that never fills its buffers uses less) and the pool
holding every packet that can be in flight: an upper bound (``total``) for long
saturated runs. The pool is reserved at that size up front and costs only the
records the run has held at once (the free stack hands out the lowest record
first, and untouched pages stay unmapped), so it grows without a copy. On a
large machine the bound is far from most runs: a 65,536-node calibration point
with half the machine sending background at full rate is bounded at 1.3 GiB,
yet its packets in flight level off near 500,000 (of 19 million places in the
buffers and source queues), and the run peaks at about 0.4 GiB; with three
quarters of the machine sending they rise for longer, to 4.3 to 4.8 million.
So a limit is applied twice: before the run on ``floor`` (every array, the pool
at its first size: what the run takes however few packets it holds), and while
it runs through the reservation (:func:`pool_reservation`): the pool reserves
no more records than fit beside the other arrays, and a run whose packets in
flight fill them stops (:func:`check_growth`) instead of never starting because
of a bound most runs do not reach. Before the arrays, the traffic tables are
built from Python lists (an all-reduce lists ``2 log2 k`` messages per rank);
those are freed first, so the peak is the larger of the two phases. The
per-byte constants below were calibrated against the peak resident memory of
real runs (``tests/simulation/engine/test_memory.py`` measures it). The worker
process itself (Python, numpy and the compiled loop: about 250 MB once) is not
counted.

Examples
--------
>>> est = estimate_memory(SimConfig())
>>> 5 < est.total / 2**20 < 40
True
>>> big = estimate_memory(SimConfig(input_buffer_packets=1_000_000))
>>> big.largest().name, big.largest().fields, round(big.largest().bytes / 2**30, 1)
('input buffers', ('input_buffer_packets',), 21.0)
>>> check_memory(SimConfig(input_buffer_packets=1_000_000), 2**30)
Traceback (most recent call last):
...
simulation.engine.memory.MemoryLimitError: input_buffer_packets: the run would need at \
least 21.0 GiB of memory (input buffers 21.0 GiB), more than the limit of 1.0 GiB per run
"""

from __future__ import annotations

from dataclasses import dataclass

from . import loop as L
from .config import SimConfig
from .kernels import KERNELS
from .routing import N_FIELDS

__all__ = ["MemoryEstimate", "MemoryLimitError", "MemoryLimitReached", "MemoryPart",
           "check_growth", "check_memory", "estimate_memory", "format_bytes",
           "initial_pool_packets", "pool_reservation"]

I32, I64 = 4, 8
#: Bytes per VC besides its queues: two int32 counters, the queue records, the head record.
VC_STATE = (2 + L.N_Q + L.N_O) * I32 + L.N_H * I64
#: Bytes per port: thirteen counters and wake-ups, two slots of the switch FIFO,
#: three port tables (built in int64, kept in int32) and the link's utilisation
#: in the result (Python objects, mostly in memory freed earlier; calibrated).
PORT_STATE = 9 * I64 + 3 * I32 + 2 * 2 * I64 + 3 * (I64 + I32) + 48
#: Bytes per endpoint: queue heads and counts, injection wake-up, its rank.
ENDPOINT_STATE = 2 * I32 + 2 * I64 + 1
#: Bytes per rank kept while the loop runs: about twenty int64 tables (traffic,
#: progress, generation schedule) and its partition (measured: 410 to 420).
RANK_STATE = 420
#: Bytes per listed message while the traffic tables are built: Python tuples
#: and lists, then three int64 arrays (measured: 160 to 200 with its step).
MESSAGE = 170
#: Bytes per message (three int64) and per step (expected and received
#: packets) kept while the loop runs.
MESSAGE_KEPT, STEP_KEPT = 3 * I64, 2 * I64
#: Bytes per packet record: ``N_FIELDS`` int32 plus its free-stack slot.
PACKET = N_FIELDS * I32 + I32
#: The latency histogram (and its cumulative sum), the generation wheel and
#: small tables, whatever the configuration.
FIXED = 2 * (1 << 17) * I64 + L.GEN_WHEEL * I64 + (1 << 16)
_POOL_PER_ENDPOINT, _POOL_EXTRA = 8, 1024


def initial_pool_packets(ranks: int, endpoints: int) -> int:
    """The packet pool's first size (the simulator's): a free packet per rank, 8 per
    endpoint and some; it doubles within its reservation whenever the loop runs out."""
    return ranks + 2 + _POOL_PER_ENDPOINT * endpoints + _POOL_EXTRA


@dataclass(frozen=True)
class MemoryPart:
    """One term of the estimate and the configuration fields that scale it."""

    name: str
    bytes: int
    fields: tuple[str, ...]


@dataclass(frozen=True)
class MemoryEstimate:
    """The estimated peak bytes of one run: the larger of building its traffic
    tables (``building``) and running its loop (the sum of ``parts``)."""

    parts: tuple[MemoryPart, ...]
    building: MemoryPart
    #: The packet pool at its first size, in bytes (``parts`` hold it at its largest).
    pool_start: int
    #: Records in the pool at its largest: every packet that can be in flight.
    pool_records: int

    @property
    def running(self) -> int:
        """Bytes alive while the loop runs, the pool at its largest."""
        return sum(p.bytes for p in self.parts)

    @property
    def total(self) -> int:
        """The peak at most: the larger phase, the pool at its largest."""
        return max(self.running, self.building.bytes)

    @property
    def pool(self) -> MemoryPart:
        return next(p for p in self.parts if p.name == "packet pool")

    @property
    def floor(self) -> int:
        """The peak at least: the larger phase, the pool at its first size."""
        return max(self.running - self.pool.bytes + self.pool_start, self.building.bytes)

    @property
    def beside_pool(self) -> int:
        """Bytes of the loop's arrays other than the packet pool."""
        return self.running - self.pool.bytes

    def growth_peak(self, packets: int) -> int:
        """Bytes alive while a full pool of ``packets`` records is copied into one of
        twice the size (both copies)."""
        return self.beside_pool + 3 * packets * PACKET

    def largest(self) -> MemoryPart:
        """The biggest part of the larger phase."""
        if self.building.bytes > self.running:
            return self.building
        return max(self.parts, key=lambda p: p.bytes)

    def as_dict(self) -> dict[str, int]:
        """``{part name: bytes}``, ``building`` and ``total`` (native ints, JSON-ready)."""
        return {**{p.name: int(p.bytes) for p in self.parts},
                self.building.name: int(self.building.bytes), "total": int(self.total)}


class MemoryLimitError(ValueError):
    """A configuration whose estimated memory exceeds the limit; ``fields`` are the
    configuration keys of the parts that make up most of it."""

    def __init__(self, message: str, fields: tuple[str, ...], estimate: MemoryEstimate):
        super().__init__(f"{fields[0] if fields else 'config'}: {message}")
        self.message = message
        self.fields = fields
        self.estimate = estimate


def format_bytes(n: float) -> str:
    """``1536 -> '1.5 KiB'``: binary units, one decimal.

    >>> format_bytes(3 * 2**30), format_bytes(512)
    ('3.0 GiB', '512 B')
    """
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{int(n)} B"


def _apps(config: SimConfig) -> int:
    """Applications (not the background)."""
    return config.replicas if config.scenario == "escalation" else 1


def _ranks(config: SimConfig) -> int:
    """Ranks of every application and of the background."""
    if config.scenario in ("interference", "background"):
        return config.endpoints
    return config.ranks * _apps(config)


def _messages(config: SimConfig) -> tuple[int, int]:
    """Listed messages and dependency steps per rank of the kernel."""
    kernel = KERNELS.get(config.pattern)
    listed = kernel.listed(config.ranks) if kernel else 0
    return (listed, kernel.steps(config.ranks)) if listed else (0, 0)


def _kernel_packets(config: SimConfig) -> int:
    """Packets one rank of the kernel sends in all (an upper bound for stencils)."""
    return KERNELS[config.pattern].packets_per_rank(config.ranks,
                                                    config.kernel_message_packets)


def _injectable(config: SimConfig) -> int:
    """Packets the ranks can inject in ``max_cycles``: one per ``packet_phits``
    cycles at most, ``rate`` of that in open loop (10 % over the mean, plus one),
    and no more than a kernel's or a task's whole work."""
    slots = -(-config.max_cycles // config.packet_phits)
    app_ranks = config.ranks * _apps(config)
    if config.is_kernel:
        per_rank = min(slots + 1, _kernel_packets(config))
    else:
        per_rank = int(1.1 * config.rate * slots) + 1
        if config.packets_per_task is not None:
            per_rank = min(per_rank, config.packets_per_task)
    background = _ranks(config) - app_ranks  # interference and background scenarios
    return app_ranks * per_rank + background * (int(1.1 * config.background_rate * slots) + 1)


def _pool_records(config: SimConfig, ranks: int, capacity: int) -> int:
    """Records in the packet pool at its largest: every packet that can be in
    flight and a free one per rank, and never fewer than its first size."""
    need = min(capacity, _injectable(config)) + ranks + 1
    return max(need, initial_pool_packets(ranks, config.endpoints))


def _pool(config: SimConfig, ranks: int, capacity: int) -> MemoryPart:
    """The packet pool at its largest (reserved at that size, so never copied)."""
    fields = (("input_buffer_packets", "output_buffer_packets", "source_queue_packets",
               "vcs") if capacity <= _injectable(config) else ("max_cycles",))
    return MemoryPart("packet pool", _pool_records(config, ranks, capacity) * PACKET, fields)


def estimate_memory(config: SimConfig) -> MemoryEstimate:
    """Estimated peak bytes of ``simulate(config)``, by part (arithmetic only).

    Parameters
    ----------
    config : SimConfig

    Returns
    -------
    MemoryEstimate
    """
    ports = config.switches * (config.concentration + sum(s - 1 for s in config.sides))
    vcs = ports * config.total_vcs
    endpoints, ranks = config.endpoints, _ranks(config)
    wheel = config.packet_phits + config.link_latency + 2
    delivery = config.link_latency // config.packet_phits + 3
    messages, steps = _messages(config)
    shape = ("sides", "concentration")
    capacity = (vcs * (config.input_buffer_packets + config.output_buffer_packets)
                + endpoints * (config.source_queue_packets + delivery))
    # ``crossbar: vc``: the crossbar's busy-until cycles and its wheel per VC, not per port
    crossbar_slots = vcs if config.crossbar == "vc" else ports
    per_vc_crossbar = (crossbar_slots - ports) * (2 * I64 + wheel * I32)
    # the loop's memo of candidate ports, one row per VC, kept under Omni-WAR only
    memo = vcs * L.N_M * I64 if config.routing == "omniwar" else 0
    parts = (
        MemoryPart("input buffers", vcs * config.input_buffer_packets * I32,
                   ("input_buffer_packets",)),
        MemoryPart("output buffers", vcs * config.output_buffer_packets * I32,
                   ("output_buffer_packets",)),
        MemoryPart("source queues", endpoints * config.source_queue_packets * I32,
                   ("source_queue_packets",)),
        _pool(config, ranks, capacity),
        MemoryPart("event wheels", ports * wheel * I32 + endpoints * delivery * 2 * I64,
                   ("packet_phits", "link_latency")),
        MemoryPart("ports and VCs", vcs * VC_STATE + ports * PORT_STATE
                   + endpoints * ENDPOINT_STATE + config.switches * L.N_SW * I64
                   + per_vc_crossbar + memo, (*shape, "vcs")),
        MemoryPart("ranks", ranks * (RANK_STATE + messages * MESSAGE_KEPT
                                     + steps * STEP_KEPT), ("ranks",)),
        MemoryPart("fixed", FIXED, ()),
    )
    building = ranks * (RANK_STATE + messages * MESSAGE + steps * (I64 + STEP_KEPT))
    return MemoryEstimate(parts, MemoryPart("building tables", building, ("ranks",)),
                          initial_pool_packets(ranks, endpoints) * PACKET,
                          _pool_records(config, ranks, capacity))


class MemoryLimitReached(RuntimeError):
    """A run stopped because its packets in flight filled the packet pool that the
    limit leaves room for: the configuration was within it, its packets were not."""

    def __init__(self, message: str, estimate: MemoryEstimate):
        super().__init__(message)
        self.message = message
        self.estimate = estimate


def check_memory(config: SimConfig, limit: int) -> MemoryEstimate:
    """The estimate of ``config``, or :class:`MemoryLimitError` when even its
    ``floor`` (the pool at its first size) is above ``limit`` bytes; the pool's
    growth is checked while the run goes (:func:`check_growth`).

    The error names the fields of the parts that hold at least a quarter of the
    floor (always the largest part's), so a client knows what to shrink.
    """
    est = estimate_memory(config)
    floor = est.floor
    if floor <= limit:
        return est
    if est.building.bytes >= floor:
        phase: tuple[MemoryPart, ...] = (est.building,)
    else:
        phase = tuple(MemoryPart(p.name, est.pool_start, p.fields) if p.name == "packet pool"
                      else p for p in est.parts)
    largest = max(phase, key=lambda p: p.bytes)
    big = [p for p in sorted(phase, key=lambda p: -p.bytes)
           if p.fields and (p.bytes * 4 >= floor or p is largest)]
    fields = tuple(dict.fromkeys(f for p in big for f in p.fields))
    detail = ", ".join(f"{p.name} {format_bytes(p.bytes)}" for p in big)
    message = (f"the run would need at least {format_bytes(floor)} of memory ({detail}), "
               f"more than the limit of {format_bytes(limit)} per run")
    raise MemoryLimitError(message, fields, est)


def pool_reservation(est: MemoryEstimate, limit: int | None) -> int:
    """Records the packet pool reserves: room for every packet that can be in
    flight, or for as many as fit beside the run's other arrays within ``limit``
    bytes (no limit: None), and never fewer than its first size."""
    start = est.pool_start // PACKET
    if limit is None:
        return est.pool_records
    return max(start, min(est.pool_records, (limit - est.beside_pool) // PACKET))


def check_growth(est: MemoryEstimate, packets: int, in_flight: int, cycle: int,
                 limit: int | None) -> None:
    """:class:`MemoryLimitReached` when a full pool of ``packets`` records (at
    ``cycle``, with ``in_flight`` packets in the network) cannot get a larger one
    within ``limit`` bytes (no limit: None): copying it into one of twice the size
    would pass the limit."""
    if limit is None or est.growth_peak(packets) <= limit:
        return
    message = (f"the run stopped at cycle {cycle}: {in_flight:,} packets in flight fill its "
               f"packet pool of {packets:,} records (about "
               f"{format_bytes(est.beside_pool + packets * PACKET)} with the run's other "
               f"arrays), and a larger pool would take the run past the limit of "
               f"{format_bytes(limit)} per run")
    raise MemoryLimitReached(message, est)
