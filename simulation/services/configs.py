"""Simulation configurations: validation against the portal's limits,
the canonical form and its hash (what reuse compares), partitions on a machine."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError

from allocation.hyperx import PLACEMENT_VERSION
from allocation.services import jobs
from simulation.constants import MAX_CONFIG_BYTES, MAX_CYCLES, MAX_ENDPOINTS
from simulation.engine import ENGINE_VERSION, SimConfig
from simulation.engine.config import (
    ALLOCATORS,
    PATTERNS,
    POLICY_NAMES,
    ROUTINGS,
    SCENARIOS,
    VC_SETS,
    study_message_packets,
)
from simulation.engine.kernels import KERNELS
from simulation.engine.memory import MemoryLimitError, check_memory, estimate_memory

CONFIG_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(SimConfig))


DEFAULTS: dict[str, Any] = SimConfig().to_dict()


#: Allowed values of the configuration's choice fields (forms and docs).
CHOICES: dict[str, tuple[str, ...]] = {
    "policy": POLICY_NAMES, "pattern": PATTERNS, "scenario": SCENARIOS, "routing": ROUTINGS,
    "vc_sets": VC_SETS, "allocator": ALLOCATORS}


_FLOAT_FIELDS = tuple(f.name for f in dataclasses.fields(SimConfig) if f.type == "float")


def _engine_errors(exc: Exception) -> dict[str, list[str]]:
    """``'ranks: 600 ranks exceed ...'`` -> ``{'ranks': ['600 ranks exceed ...']}``."""
    message = str(exc)
    prefix = "unknown configuration keys: "
    if message.startswith(prefix):
        return {key.strip(): ["unknown configuration key"]
                for key in message[len(prefix):].split(",")}
    field, sep, rest = message.partition(": ")
    if sep and field in CONFIG_FIELDS:
        return {field: [rest]}
    return {"config": [message]}


def parse_config(data: Any) -> SimConfig:
    """The engine's own validation only; ``ValueError`` carries its message (CLI)."""
    if not isinstance(data, dict):
        raise ValueError("config: must be a JSON object")
    try:
        return SimConfig.from_dict(data)
    except TypeError as exc:
        raise ValueError(f"config: {exc}") from None


def validate_config(data: Any) -> SimConfig:
    """Validate a configuration for the portal: the engine's rules plus size limits.

    Raises
    ------
    django.core.exceptions.ValidationError
        ``{field: [message]}`` naming the configuration key.
    """
    if not isinstance(data, dict):
        raise ValidationError({"config": ["must be a JSON object of configuration keys"]})
    size = len(json.dumps(data, default=str))
    if size > MAX_CONFIG_BYTES:
        raise ValidationError({"config": [f"{size} bytes of JSON, more than "
                                          f"{MAX_CONFIG_BYTES}"]})
    try:
        cfg = parse_config(data)
    except ValueError as exc:
        raise ValidationError(_engine_errors(exc)) from None
    if cfg.max_cycles > MAX_CYCLES:
        raise ValidationError({"max_cycles": [f"must be <= {MAX_CYCLES} on the portal "
                                              "(use manage.py hx_simulate for more)"]})
    if cfg.endpoints > MAX_ENDPOINTS:
        raise ValidationError({"sides": [f"{cfg.endpoints} endpoints, more than "
                                         f"{MAX_ENDPOINTS} on the portal"]})
    try:  # buffers, packets in flight, event wheels: bounded by an estimate of memory
        check_memory(cfg, settings.HX_SIM_MAX_BYTES)
    except MemoryLimitError as exc:
        raise ValidationError({field: [exc.message] for field in exc.fields or ("config",)}) \
            from None
    return cfg


def canonical_config(cfg: SimConfig) -> dict[str, Any]:
    """Full configuration with every default spelled out; floats as floats."""
    out = cfg.to_dict()
    for name in _FLOAT_FIELDS:
        out[name] = float(out[name])
    return out


def config_hash(config: dict[str, Any], partitions: Sequence[Sequence[int]] | None = None,
                engine_version: str = ENGINE_VERSION,
                placement_version: int | None = None) -> str:
    """sha256 of the canonical JSON of the configuration, partitions and engine version;
    without explicit partitions, of the placement version too (the allocation core then
    places the job, and a change of its placement changes the result). Placement
    version 1 predates the key, so its hashes leave it out; ``placement_version``
    defaults to today's.

    >>> a = config_hash(canonical_config(SimConfig.from_dict({"rate": 1})))
    >>> a == config_hash(canonical_config(SimConfig())) and len(a)
    64
    """
    payload = {"config": config, "engine_version": engine_version,
               "partitions": [list(map(int, p)) for p in partitions] if partitions else None}
    version = PLACEMENT_VERSION if placement_version is None else placement_version
    if not partitions and version > 1:
        payload["placement_version"] = version
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def placement_version_of(config: dict[str, Any], stored_hash: str, *, placed: bool,
                         engine_version: str = ENGINE_VERSION) -> int | None:
    """The placement version a stored run's job was placed with, read back from its
    hash (runs do not store it; the hash has held it since version 2): None for a run
    on explicit partitions (``placed`` false: the allocation core placed nothing) or
    for a hash that no version gives.

    >>> cfg = canonical_config(SimConfig())
    >>> placement_version_of(cfg, config_hash(cfg), placed=True) == PLACEMENT_VERSION
    True
    >>> placement_version_of(cfg, config_hash(cfg, placement_version=1), placed=True)
    1
    """
    if not placed:
        return None
    for version in range(PLACEMENT_VERSION, 0, -1):
        if config_hash(config, None, engine_version, version) == stored_hash:
            return version
    return None


def describe(config: dict[str, Any]) -> str:
    """One line naming what a configuration simulates."""
    sides = "x".join(str(s) for s in config.get("sides", DEFAULTS["sides"]))
    get = lambda k: config.get(k, DEFAULTS[k])  # noqa: E731
    text = (f"{get('pattern')} {get('ranks')} ranks, {get('policy')}, {get('scenario')}"
            f" on {sides} c={get('concentration')}, {get('routing')}, {get('vc_sets')} VCs")
    if get("scenario") == "escalation":
        text += f", {get('replicas')} replicas"
    return text


def check_config(data: Any, machine=None) -> dict[str, Any]:
    """What the form's live validation shows: the full config and derived sizes."""
    cfg = validate_config(with_machine(data, machine))
    memory = estimate_memory(cfg)
    return {"valid": True, "config": canonical_config(cfg), "endpoints": cfg.endpoints,
            "switches": cfg.switches, "total_vcs": cfg.total_vcs,
            "memory_bytes": memory.total, "memory_floor_bytes": memory.floor,
            "memory_limit_bytes": settings.HX_SIM_MAX_BYTES,
            "description": describe(canonical_config(cfg)),
            "config_hash": config_hash(canonical_config(cfg)),
            "engine_version": ENGINE_VERSION}


def with_machine(data: Any, machine) -> Any:
    """The configuration with the machine's shape (a run on a machine simulates that machine)."""
    if machine is None or not isinstance(data, dict):
        return data
    return {**data, "sides": list(machine.sides), "concentration": machine.concentration}


def machine_partitions(machine, cfg: SimConfig) -> list[list[int]]:
    """Partitions from the machine's free nodes now, one per application of ``cfg``."""
    n_apps = cfg.replicas if cfg.scenario == "escalation" else 1
    available, _ = jobs.occupancy(machine)
    parts: list[list[int]] = []
    for i in range(n_apps):
        try:
            candidate = jobs.propose(machine, cfg.policy, cfg.ranks, cfg.seed + i,
                                     available=available.copy(), exact=False)
        except ValidationError as exc:
            raise ValidationError({"machine": [m for ms in exc.message_dict.values()
                                               for m in ms]}) from None
        if candidate.error:
            raise ValidationError({"machine": [f"replica {i + 1}: {candidate.error}"]})
        available[list(candidate.endpoints)] = False
        parts.append(list(candidate.endpoints))
    return parts


def usable_ranks(pattern: str, nodes: int) -> int:
    """The most ranks ``pattern`` runs among ``nodes`` nodes (its kernel's rank rule:
    a power of two for the all-reduce); ``nodes`` for open-loop patterns."""
    kernel = KERNELS.get(pattern)
    return kernel.usable_ranks(nodes) if kernel else nodes


def study_packets_per_rank(pattern: str, ranks: int) -> int | None:
    """Packets one rank of ``pattern``'s kernel sends in all at the study's volume
    (None for open-loop patterns, whose amount the caller sets).

    About the study's 1,024 for every kernel up to 1,024 ranks, except the
    all-reduce's two halvings (about 2,048); past 1,024 ranks the all-to-all still
    sends one packet to every peer, so its volume grows with the job: 4,095 packets a
    rank at 4,096 ranks, and a run lasts about as much longer."""
    kernel = KERNELS.get(pattern)
    if kernel is None:
        return None
    return kernel.packets_per_rank(ranks, study_message_packets(pattern, ranks))


def is_kernel(pattern: str) -> bool:
    """Whether ``pattern`` is a closed-loop kernel (else open-loop traffic)."""
    return pattern in KERNELS
