"""Validated, immutable configuration of one network simulation.

The defaults are the settings of the HyperX allocation study (docs/domain.md
section 6) on its reference machine: a 2D 8 x 8 HyperX with 8 endpoints per
switch, virtual cut-through, 16-phit packets, 4 VCs, input buffers of 8 and
output buffers of 4 packets per VC, internal speedup 2 and a random
allocator.  Timing constants that the study leaves open are documented on
:class:`SimConfig`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NoReturn

from allocation.hyperx.patterns import (
    KERNEL_PATTERNS,
    OPEN_LOOP_PATTERNS,
    PATTERN_ALIASES,
    PATTERNS,
    UNIFORM,
    canonical_pattern,
)
from allocation.hyperx.policies import ONLINE_POLICIES
from allocation.hyperx.shape import MachineShape

from .kernels import KERNELS

__all__ = [
    "ALL2ALL_SCHEDULES",
    "ALLOCATORS",
    "CROSSBARS",
    "KERNEL_PATTERNS",
    "LATER_FIELDS",
    "MAX_CYCLES_LIMIT",
    "MAX_ENDPOINTS",
    "OCCUPANCIES",
    "OPEN_LOOP_PATTERNS",
    "PATTERNS",
    "PATTERN_ALIASES",
    "POLICY_NAMES",
    "PORT_CHOICES",
    "ROUTINGS",
    "SCENARIOS",
    "STUDY_KERNEL_PHITS",
    "STUDY_STENCIL_PHITS",
    "VC_SETS",
    "SimConfig",
    "canonical_pattern",
    "required_vcs",
    "study_message_packets",
]

ROUTINGS = ("dor", "min", "valiant", "omniwar")
VC_SETS = ("shared", "per_partition")
ALLOCATORS = ("random", "round_robin")
SCENARIOS = ("single", "escalation", "interference", "background")
#: Names of the online allocation policies: the policy registry's
#: (``allocation.hyperx.policies.REGISTRY``), the study's seven then our own.
POLICY_NAMES = ONLINE_POLICIES
ALL2ALL_SCHEDULES = ("rounds", "blocks")
OCCUPANCIES = ("port_vc", "vc")
PORT_CHOICES = ("wait", "fallback")
CROSSBARS = ("port", "vc")
#: Fields added after engine 2.0 and their defaults: left out of ``to_dict`` at
#: the default, so that configurations (and hashes) stored before them still match.
LATER_FIELDS: dict[str, Any] = {"crossbar": "port"}
#: Data each rank of a kernel sends at the study's volume, in phits (16 Ki):
#: the size the study's authors give their all-reduce on this machine.
STUDY_KERNEL_PHITS = 16_384
#: Stencil messages at the study's volume: 1,024 phits to each neighbour.
STUDY_STENCIL_PHITS = 1_024
MAX_ENDPOINTS = 65_536
MAX_CYCLES_LIMIT = 100_000_000


def required_vcs(routing: str, dims: int) -> int:
    """Smallest number of VCs per set with which ``routing`` is deadlock free.

    DOR needs one VC (dimension order is acyclic), MIN one VC per possible
    hop (``q``), Valiant one per phase (2) and Omni-WAR one per possible hop
    (``2 q``: ``q`` minimal hops plus at most ``q`` deroutes).

    Examples
    --------
    >>> required_vcs("omniwar", 2), required_vcs("min", 3), required_vcs("dor", 3)
    (4, 3, 1)
    """
    return {"dor": 1, "min": dims, "valiant": 2, "omniwar": 2 * dims}[routing]


def study_message_packets(pattern: str, ranks: int, packet_phits: int = 16) -> int:
    """Packets per message of ``pattern`` at the study's volume.

    Every kernel moves about :data:`STUDY_KERNEL_PHITS` per rank, cut as the
    study's kernels are: the all-to-all sends ``16384 / ranks`` phits to each
    peer (one-packet rounds), the all-reduce starts its reduce-scatter with
    half of it (Rabenseifner), a random-involution pair exchanges all of it,
    and a stencil sends :data:`STUDY_STENCIL_PHITS` to each neighbour.
    Open-loop patterns send one-packet messages.

    Examples
    --------
    >>> [study_message_packets(p, 64) for p in ("all2all", "allreduce", "stencil4",
    ...                                           "stencil8", "random_involution")]
    [16, 512, 64, 64, 1024]
    >>> study_message_packets("all2all", 128), study_message_packets("uniform", 64)
    (8, 1)
    """
    kernel = KERNELS.get(pattern)
    if kernel is None:
        return 1
    return kernel.study_packets(ranks, max(1, STUDY_KERNEL_PHITS // packet_phits),
                                STUDY_STENCIL_PHITS // packet_phits)


def _fail(field: str, msg: str) -> NoReturn:
    """Raise the :class:`ValueError` of an invalid ``field``."""
    raise ValueError(f"{field}: {msg}")


@dataclass(frozen=True)
class SimConfig:
    """Parameters of one simulation run.

    Parameters
    ----------
    sides : tuple of int
        Switches per dimension ``(n_1, ..., n_q)``.
    concentration : int
        Endpoints per switch ``c``.
    routing : {'dor', 'min', 'valiant', 'omniwar'}
        Routing algorithm (see :mod:`simulation.engine.routing`).
    vcs : int
        Virtual channels per port and per VC set.
    vc_sets : {'shared', 'per_partition'}
        ``per_partition`` gives every application (and the background
        traffic) its own set of ``vcs`` VCs ("fabric partitioning").
    packet_phits : int
        Packet length ``P`` in phits; a packet holds a link for ``P`` cycles.
    input_buffer_packets, output_buffer_packets : int
        Buffer depth per VC, in packets.
    source_queue_packets : int
        Depth of each endpoint's injection queue.  When it is full, newly
        offered open-loop packets are dropped (counted as offered, not
        accepted) and closed-loop ranks wait.
    speedup : int
        Internal crossbar speedup: a packet crosses the crossbar in
        ``ceil(P / speedup)`` cycles.
    allocator : {'random', 'round_robin'}
        Arbitration order of the separable switch and link allocators.
    link_latency : int
        Cycles for a packet's head to cross a link (default 1).
    router_latency : int
        Cycles from the crossbar grant until the packet may leave on its
        output link (default 1).  Zero-load latency of a packet over ``h``
        switch-to-switch hops is ``(h + 1) * (router_latency + link_latency)
        + link_latency + packet_phits`` (injection link, ``h + 1`` routers,
        ``h`` network links, ejection link, serialisation).
    policy : str
        Allocation policy used to build partitions (one of the seven).
    scenario : {'single', 'escalation', 'interference', 'background'}
        How applications are placed (see :mod:`simulation.engine.scenarios`).
    pattern : str
        Open-loop pattern (``uniform``, ``permutation``,
        ``switch_permutation``) or closed-loop kernel (``all2all``,
        ``allreduce``, ``stencil4``, ``stencil8``, ``random_involution``).
    ranks : int
        Endpoints per application.
    replicas : int
        Number of applications in the ``escalation`` scenario.
    rate : float
        Open-loop injection rate in phits/cycle/endpoint (0 < rate <= 1).
    background_rate : float
        Rate of the background permutation traffic (``interference``).
    packets_per_task : int or None
        Packets each open-loop task sends; ``None`` runs until
        ``max_cycles`` and measures after ``warmup_cycles``.
    message_packets : int
        Packets per kernel message (for ``allreduce`` the first
        reduce-scatter message; later ones halve, Rabenseifner; for
        ``all2all`` the packets to each peer).  ``0`` (the default) is the
        study's volume, :func:`study_message_packets`.
    all2all_schedule : {'rounds', 'blocks'}
        ``rounds`` (the study's): ``message_packets`` rounds of one packet
        to every peer in shift order; ``blocks``: all packets to a peer
        back to back, then the next peer.
    stencil_wrap : bool
        Periodic stencil grid; the study's neighbour sets stop at the border.
    occupancy : {'port_vc', 'vc'}
        Cost of a MIN / Omni-WAR candidate: ``port_vc`` (the study's router)
        adds the occupancy of the whole output port (every VC) to that of
        the candidate VC; ``vc`` counts the candidate VC only.
    port_choice : {'wait', 'fallback'}
        ``wait`` (the study's router: lowest cost first, flow control
        after): when the best candidate's crossbar output is busy or its VC
        full, the packet waits; ``fallback`` takes the best candidate that
        is available now.
    crossbar : {'port', 'vc'}
        What a crossing holds until the packet's tail has crossed: ``port``
        (the default) the input and output ports, so one packet per port at
        a time; ``vc`` (the study's simulator) only the input VC and the
        output VC, so several VCs of a port cross at once and a candidate is
        refused only when its own VC is being fed or full.
    seed : int
        Seed of every random choice (traffic, allocator, routing).
    max_cycles : int
        Hard limit of simulated cycles.
    warmup_cycles : int
        Cycles excluded from throughput and latency statistics when no
        application has a finite amount of work.

    Examples
    --------
    >>> cfg = SimConfig.from_dict({"sides": [4, 4], "concentration": 4, "ranks": 16})
    >>> cfg.sides, cfg.endpoints, cfg.routing
    ((4, 4), 64, 'min')
    >>> SimConfig.from_dict({"colour": 1})
    Traceback (most recent call last):
    ...
    ValueError: unknown configuration keys: colour
    """

    sides: tuple[int, ...] = (8, 8)
    concentration: int = 8
    routing: str = "min"
    vcs: int = 4
    vc_sets: str = "shared"
    packet_phits: int = 16
    input_buffer_packets: int = 8
    output_buffer_packets: int = 4
    source_queue_packets: int = 16
    speedup: int = 2
    allocator: str = "random"
    link_latency: int = 1
    router_latency: int = 1
    policy: str = "row"
    scenario: str = "single"
    pattern: str = UNIFORM
    ranks: int = 64
    replicas: int = 1
    rate: float = 1.0
    background_rate: float = 1.0
    packets_per_task: int | None = None
    message_packets: int = 0
    seed: int = 0
    max_cycles: int = 1_000_000
    warmup_cycles: int = 0
    all2all_schedule: str = "rounds"
    stencil_wrap: bool = False
    occupancy: str = "port_vc"
    port_choice: str = "wait"
    crossbar: str = "port"

    def __post_init__(self) -> None:
        object.__setattr__(self, "sides", tuple(int(s) for s in self.sides))
        object.__setattr__(self, "pattern", canonical_pattern(self.pattern))
        self.validate()

    # ------------------------------------------------------------------ derived
    @cached_property
    def geometry(self) -> MachineShape:
        """The machine's shape (sizes, checks, coordinate maps), built once."""
        return MachineShape(self.sides, self.concentration)

    @property
    def dims(self) -> int:
        """Number of dimensions ``q``."""
        return self.geometry.dimensions

    @property
    def switches(self) -> int:
        """Number of switches."""
        return self.geometry.switch_count

    @property
    def endpoints(self) -> int:
        """Number of endpoints (``switches * concentration``)."""
        return self.geometry.node_count

    @property
    def kernel_message_packets(self) -> int:
        """``message_packets``, or the study's volume when it is 0."""
        if self.message_packets:
            return self.message_packets
        return study_message_packets(self.pattern, self.ranks, self.packet_phits)

    @property
    def is_kernel(self) -> bool:
        """Whether ``pattern`` is a closed-loop kernel."""
        return self.pattern in KERNEL_PATTERNS

    # --------------------------------------------------------------- validation
    def validate(self) -> None:
        """Raise :class:`ValueError` naming the first invalid field.

        The checks run in a fixed order (machine, choices, integers, limits,
        ranks), so that the field named is the same whatever else is wrong.
        """
        self._validate_machine()
        self._validate_choices()
        self._validate_integers()
        self._validate_limits()
        self._validate_ranks()

    def _pos_int(self, field: str, minimum: int = 1) -> None:
        """``field`` must be an integer (not a bool) of at least ``minimum``."""
        v = getattr(self, field)
        if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
            _fail(field, f"must be an integer >= {minimum}, got {v!r}")

    def _validate_machine(self) -> None:
        """Sides, concentration and the machine's size: the shape's checks (its
        :class:`~allocation.hyperx.shape.ShapeError` is a ``ValueError`` naming the field)."""
        self.geometry.check_bounds(MAX_ENDPOINTS)

    def _validate_choices(self) -> None:
        """Every field that names one of a fixed set of choices."""
        for field, choices in (
            ("routing", ROUTINGS),
            ("vc_sets", VC_SETS),
            ("allocator", ALLOCATORS),
            ("scenario", SCENARIOS),
            ("pattern", PATTERNS),
            ("all2all_schedule", ALL2ALL_SCHEDULES),
            ("occupancy", OCCUPANCIES),
            ("port_choice", PORT_CHOICES),
            ("crossbar", CROSSBARS),
        ):
            if getattr(self, field) not in choices:
                _fail(field, f"must be one of {', '.join(choices)}, got {getattr(self, field)!r}")
        if self.policy not in POLICY_NAMES:
            _fail("policy", f"unknown policy {self.policy!r}")

    def _validate_integers(self) -> None:
        """The integer fields' types and lower bounds, and the one boolean."""
        for field in (
            "vcs",
            "packet_phits",
            "input_buffer_packets",
            "output_buffer_packets",
            "source_queue_packets",
            "speedup",
            "link_latency",
            "router_latency",
            "ranks",
            "replicas",
            "max_cycles",
        ):
            self._pos_int(field)
        self._pos_int("message_packets", 0)
        self._pos_int("warmup_cycles", 0)
        if not isinstance(self.stencil_wrap, bool):
            _fail("stencil_wrap", f"must be true or false, got {self.stencil_wrap!r}")
        self._pos_int("seed", 0)

    def _validate_limits(self) -> None:
        """VCs (deadlock freedom), cycle limits, rates and the packets per task."""
        if self.vcs * self.vc_sets_count > 256:
            _fail("vcs", "more than 256 virtual channels per port in total")
        need = required_vcs(self.routing, self.dims)
        if self.vcs < need:
            _fail("vcs", f"{self.routing} routing on {self.dims} dimensions needs >= {need} VCs")
        if self.max_cycles > MAX_CYCLES_LIMIT:
            _fail("max_cycles", f"must be <= {MAX_CYCLES_LIMIT}")
        if self.warmup_cycles >= self.max_cycles:
            _fail("warmup_cycles", "must be smaller than max_cycles")
        for field in ("rate", "background_rate"):
            v = getattr(self, field)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not 0.0 < v <= 1.0:
                _fail(field, f"must be a number in (0, 1], got {v!r}")
        if self.packets_per_task is not None:
            self._pos_int("packets_per_task")

    def _validate_ranks(self) -> None:
        """The ranks against the machine, the scenario and the pattern."""
        if self.ranks < 2:
            _fail("ranks", "an application needs at least 2 ranks")
        if self.ranks > self.endpoints:
            _fail("ranks", f"{self.ranks} ranks exceed the {self.endpoints} endpoints")
        if self.scenario == "escalation" and self.replicas * self.ranks > self.endpoints:
            _fail("replicas", f"{self.replicas} x {self.ranks} ranks exceed the machine")
        if self.scenario in ("interference", "background") and \
                self.ranks >= self.endpoints - 1:
            _fail("ranks", "interference needs at least 2 background endpoints")
        kernel = KERNELS.get(self.pattern)
        if kernel is not None and not kernel.ranks_ok(self.ranks):
            _fail("ranks", f"{self.pattern} needs {kernel.rank_rule}")
        if self.pattern == "switch_permutation" and self.ranks % self.concentration:
            _fail("ranks", "switch_permutation needs ranks to be a multiple of concentration")

    @property
    def vc_sets_count(self) -> int:
        """Number of VC sets (1 when shared)."""
        if self.vc_sets == "shared":
            return 1
        apps = self.replicas if self.scenario == "escalation" else 1
        return apps + (1 if self.scenario in ("interference", "background") else 0)

    @property
    def total_vcs(self) -> int:
        """VCs per port over all sets."""
        return self.vcs * self.vc_sets_count

    # ----------------------------------------------------------- serialisation
    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SimConfig:
        """Build a validated configuration from a plain dictionary.

        Unknown keys raise :class:`ValueError` naming them; missing keys take
        their defaults.
        """
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise ValueError(f"unknown configuration keys: {', '.join(unknown)}")
        kw = dict(d)
        if "sides" in kw:
            try:
                kw["sides"] = tuple(int(s) for s in kw["sides"])
            except (TypeError, ValueError):
                raise ValueError(f"sides: not a sequence of integers: {kw['sides']!r}") from None
        return cls(**kw)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-compatible dictionary (``sides`` as a list), every field but
        those added after engine 2.0 (``LATER_FIELDS``) at their defaults, so that
        stored runs' configurations and hashes still match.

        Examples
        --------
        >>> SimConfig().to_dict()["sides"]
        [8, 8]
        >>> "crossbar" in SimConfig().to_dict(), SimConfig(crossbar="vc").to_dict()["crossbar"]
        (False, 'vc')
        """
        d = dataclasses.asdict(self)
        d["sides"] = list(self.sides)
        for name, default in LATER_FIELDS.items():
            if d[name] == default:
                del d[name]
        return d
