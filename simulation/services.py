"""The write path for simulations: the only bridge between rows and the pure engine.

* A run is a :class:`~simulation.models.SimulationRun` row holding the full,
  validated engine configuration (``SimConfig.to_dict()``), the engine version
  and ``config_hash`` (sha256 of the canonical JSON of config, explicit
  partitions and engine version). It is enqueued once its row is committed and
  executed by :func:`execute_run` through :func:`hxportal.runs.execute`
  (claim, simulate outside any transaction, store once).
* Reuse: a run whose ``config_hash`` matches a succeeded run copies that
  run's result instead of simulating (``result["reused_from"]`` names it).
  Single runs are reused at creation; sweep runs when the worker claims them.
* A sweep is the product of parameter lists over a base configuration, one run
  (and one Celery task) per point; its status and progress are derived from
  its runs.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from allocation.services import jobs
from hxportal.errors import ConflictError
from hxportal.models import TERMINAL_RUN_STATUSES, RunStatus
from hxportal.runs import RunReporter, enqueue, execute
from simulation import presets, reproduction_preset
from simulation.engine import ENGINE_VERSION, SimConfig, simulate
from simulation.engine.config import (
    ALLOCATORS,
    PATTERNS,
    POLICY_NAMES,
    ROUTINGS,
    SCENARIOS,
    VC_SETS,
)
from simulation.models import SimulationRun, Sweep, SweepStatus

# Limits of what the web side accepts (the CLI is not limited).
MAX_CYCLES = 5_000_000
MAX_ENDPOINTS = 16_384
MAX_CONFIG_BYTES = 8_192
MAX_SWEEP_RUNS = 2_000
MAX_PRESET_RUNS = 5_000
MAX_VALUES_PER_PARAMETER = 256
MAX_NAME = 128
CREATE_BATCH = 500

CONFIG_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(SimConfig))
DEFAULTS: dict[str, Any] = SimConfig().to_dict()
#: Allowed values of the configuration's choice fields (forms and docs).
CHOICES: dict[str, tuple[str, ...]] = {
    "policy": POLICY_NAMES, "pattern": PATTERNS, "scenario": SCENARIOS, "routing": ROUTINGS,
    "vc_sets": VC_SETS, "allocator": ALLOCATORS}
_FLOAT_FIELDS = tuple(f.name for f in dataclasses.fields(SimConfig) if f.type == "float")
#: Order in which sweep parameters vary (the rest follow alphabetically).
SWEEP_ORDER = ("policy", "pattern", "ranks", "scenario", "replicas", "routing", "vc_sets",
               "seed")
#: Columns of the flat results table (CSV / JSON download, charts).
RESULT_COLUMNS = ("run", "status", "policy", "pattern", "scenario", "ranks", "replicas",
                  "routing", "vc_sets", "seed", "message_packets", "makespan_cycles",
                  "target_cycles", "throughput", "latency_mean", "latency_p99", "cycles",
                  "completed", "wall_seconds", "reused_from", "error")


# --------------------------------------------------------------------------
# Configuration


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
    return cfg


def canonical_config(cfg: SimConfig) -> dict[str, Any]:
    """Full configuration with every default spelled out; floats as floats."""
    out = cfg.to_dict()
    for name in _FLOAT_FIELDS:
        out[name] = float(out[name])
    return out


def config_hash(config: dict[str, Any], partitions: Sequence[Sequence[int]] | None = None,
                engine_version: str = ENGINE_VERSION) -> str:
    """sha256 of the canonical JSON of the configuration, partitions and engine version.

    >>> a = config_hash(canonical_config(SimConfig.from_dict({"rate": 1})))
    >>> a == config_hash(canonical_config(SimConfig())) and len(a)
    64
    """
    payload = {"config": config, "engine_version": engine_version,
               "partitions": [list(map(int, p)) for p in partitions] if partitions else None}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


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
    cfg = validate_config(_with_machine(data, machine))
    return {"valid": True, "config": canonical_config(cfg), "endpoints": cfg.endpoints,
            "switches": cfg.switches, "total_vcs": cfg.total_vcs,
            "description": describe(canonical_config(cfg)),
            "config_hash": config_hash(canonical_config(cfg)),
            "engine_version": ENGINE_VERSION}


def _with_machine(data: Any, machine) -> Any:
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


# --------------------------------------------------------------------------
# Runs


def _user(user):
    return user if getattr(user, "is_authenticated", False) else None


def _new_run(cfg: SimConfig, *, user=None, sweep: Sweep | None = None, machine=None,
             partitions: list[list[int]] | None = None,
             point: dict[str, Any] | None = None) -> SimulationRun:
    config = canonical_config(cfg)
    parameters: dict[str, Any] = {}
    if point:
        parameters["point"] = point
    if partitions:
        parameters["partitions"] = partitions
    return SimulationRun(config=config, engine_version=ENGINE_VERSION,
                         config_hash=config_hash(config, partitions), seed=cfg.seed,
                         sweep=sweep, machine=machine, user=_user(user), parameters=parameters)


def start_run(config: Any, *, user=None, machine=None) -> SimulationRun:
    """Create a run and enqueue it after commit, or copy a stored identical result."""
    cfg = validate_config(_with_machine(config, machine))
    partitions = machine_partitions(machine, cfg) if machine is not None else None
    with transaction.atomic():
        run = _new_run(cfg, user=user, machine=machine, partitions=partitions)
        run.save()
        source = reusable_source(run)
        if source is not None:
            _store_reused(run, source)
        else:
            enqueue(run)
    return run


def reusable_source(run: SimulationRun) -> SimulationRun | None:
    """The oldest succeeded run with the same hash (never a reused copy's copy chain)."""
    return (SimulationRun.objects.filter(config_hash=run.config_hash,
                                         engine_version=run.engine_version,
                                         status=RunStatus.SUCCEEDED)
            .exclude(pk=run.pk).order_by("finished_at", "id").first())


def _reused_result(source: SimulationRun) -> dict[str, Any]:
    result = dict(source.result or {})
    result["reused_from"] = result.get("reused_from") or source.pk
    return result


def _store_reused(run: SimulationRun, source: SimulationRun) -> None:
    now = timezone.now()
    run.result = _reused_result(source)
    run.status = RunStatus.SUCCEEDED
    run.progress = 1.0
    run.started_at = run.finished_at = now
    run.log = [f"{now:%H:%M:%S} identical to run {source.pk}: result reused, not simulated"]
    run.wall_seconds = 0.0
    run.summary = {**summarise(run.result), "wall_seconds": 0.0}
    run.save()


def simulate_work(run: SimulationRun, reporter: RunReporter) -> dict[str, Any]:
    """The work of one run (outside any transaction): reuse or simulate."""
    source = reusable_source(run)
    if source is not None:
        reporter.log(f"identical to run {source.pk}: result reused, not simulated")
        return _reused_result(source)
    cfg = SimConfig.from_dict(run.config)
    stored = run.parameters.get("partitions")
    partitions = [np.asarray(p, dtype=np.int64) for p in stored] if stored else None
    reporter.log(f"simulating {describe(run.config)} (attempt {run.attempts})")
    started = time.perf_counter()
    res = simulate(cfg, partitions, progress=reporter.progress)
    wall = time.perf_counter() - started
    result = res.as_dict()
    result["wall_seconds"] = wall
    makespan = result["makespan_cycles"]
    reporter.log(f"done in {wall:.2f} s: {result['cycles']} cycles, makespan "
                 f"{makespan if makespan is not None else 'n/a'}")
    return result


def _store_summary(run: SimulationRun) -> None:
    result = run.result or {}
    run.wall_seconds = 0.0 if result.get("reused_from") else float(
        result.get("wall_seconds") or 0.0)
    run.summary = {**summarise(result), "wall_seconds": run.wall_seconds}
    run.save(update_fields=["summary", "wall_seconds"])


def execute_run(run_id: int) -> str | None:
    """What the Celery task does: claim, simulate, store once (redelivery-safe)."""
    return execute(SimulationRun, run_id, simulate_work, on_success=_store_summary)


def summarise(result: dict[str, Any] | None) -> dict[str, Any]:
    """Headline figures of a result, small enough for lists and charts."""
    if not result:
        return {}
    apps = result.get("apps") or []
    targets = [a.get("completion_cycles") for a in apps if a.get("role") == "app"]
    links = result.get("link_utilisation") or []
    return {
        "makespan_cycles": result.get("makespan_cycles"),
        "target_cycles": targets[0] if targets else None,
        "cycles": result.get("cycles"),
        "completed": result.get("completed"),
        "throughput": result.get("throughput"),
        "latency_mean": result.get("latency_mean"),
        "latency_p99": result.get("latency_p99"),
        "max_link_utilisation": max((u for _, _, u in links), default=None),
        "wall_seconds": result.get("wall_seconds"),
        "reused_from": result.get("reused_from"),
        "apps": [{"policy": a.get("policy"), "role": a.get("role"),
                  "completion_cycles": a.get("completion_cycles")} for a in apps],
    }


def cancel_run(run: SimulationRun) -> SimulationRun:
    """Mark a pending or running run cancelled; a worker finishing later stores nothing."""
    with transaction.atomic():
        row = SimulationRun.objects.select_for_update().get(pk=run.pk)
        if row.status in TERMINAL_RUN_STATUSES:
            raise ConflictError(f"run {row.pk} is already {row.status}", field="status")
        row.status = RunStatus.CANCELLED
        row.finished_at = timezone.now()
        row.error = "cancelled"
        row.save(update_fields=["status", "finished_at", "error"])
    return row


def delete_run(run: SimulationRun) -> None:
    if run.status not in TERMINAL_RUN_STATUSES:
        raise ConflictError(f"run {run.pk} is {run.status}; cancel it first", field="status")
    run.delete()


def simulate_inline(config: Any) -> dict[str, Any]:
    """Run one simulation in this process (no database): the CLI.

    Raises ``ValueError`` with the engine's message for a bad configuration.
    """
    cfg = parse_config(config)
    started = time.perf_counter()
    res = simulate(cfg)
    result = res.as_dict()
    result["wall_seconds"] = time.perf_counter() - started
    return result


# --------------------------------------------------------------------------
# Sweeps


def _check_parameters(parameters: Any) -> dict[str, list[Any]]:
    if not isinstance(parameters, dict) or not parameters:
        raise ValidationError({"parameters": ["must be an object of config key -> list of "
                                              "values, e.g. {\"policy\": [\"row\", "
                                              "\"diagonal\"]}"]})
    errors: dict[str, list[str]] = {}
    for key, values in parameters.items():
        label = f"parameters.{key}"
        if key not in CONFIG_FIELDS:
            errors[label] = ["unknown configuration key"]
        elif not isinstance(values, list) or not values:
            errors[label] = ["must be a non-empty list of values"]
        elif len(values) > MAX_VALUES_PER_PARAMETER:
            errors[label] = [f"at most {MAX_VALUES_PER_PARAMETER} values"]
        elif len({json.dumps(v, sort_keys=True) for v in values}) != len(values):
            errors[label] = ["values must be distinct"]
    if errors:
        raise ValidationError(errors)
    total = math.prod(len(v) for v in parameters.values())
    if total > MAX_SWEEP_RUNS:
        raise ValidationError({"parameters": [f"{total} runs, more than {MAX_SWEEP_RUNS} "
                                              "per sweep"]})
    order = [k for k in SWEEP_ORDER if k in parameters] + sorted(
        k for k in parameters if k not in SWEEP_ORDER)
    return {k: parameters[k] for k in order}


def expand_sweep(base: Any, parameters: Any) -> list[tuple[dict[str, Any], SimConfig]]:
    """Every point of the product with its validated configuration.

    Parameter values override the base's value of the same key. An invalid point
    fails the whole sweep, naming the point and the problem.
    """
    if not isinstance(base, dict):
        raise ValidationError({"base": ["must be a JSON object of configuration keys"]})
    params = _check_parameters(parameters)
    errors = {f"base.{k}": ["unknown configuration key"]
              for k in base if k not in CONFIG_FIELDS}
    if errors:
        raise ValidationError(errors)
    points = []
    keys = list(params)
    for values in itertools.product(*params.values()):
        point = dict(zip(keys, values, strict=True))
        try:
            cfg = validate_config(base | point)
        except ValidationError as exc:
            label = ", ".join(f"{k}={v}" for k, v in point.items())
            problems = "; ".join(f"{k}: {'; '.join(v)}" for k, v in exc.message_dict.items())
            raise ValidationError({"parameters": [f"point {label}: {problems}"]}) from None
        points.append((point, cfg))
    return points


def create_sweep(*, name: str, base: Any, parameters: Any, user=None) -> Sweep:
    """A sweep over the product of ``parameters`` (config key -> list of values)."""
    points = expand_sweep(base, parameters)
    return _create_sweep(name=name, base=dict(base), parameters=dict(parameters),
                         points=points, user=user)


def _check_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
        raise ValidationError({"name": [f"must be 1-{MAX_NAME} characters"]})
    return name.strip()


def _create_sweep(*, name: str, base: dict, parameters: dict,
                  points: list[tuple[dict[str, Any], SimConfig]], user=None,
                  preset: str = "") -> Sweep:

    name = _check_name(name)
    with transaction.atomic():
        sweep = Sweep.objects.create(name=name, base=base, parameters=parameters,
                                     preset=preset, run_count=len(points), user=_user(user))
        rows = [_new_run(cfg, user=user, sweep=sweep, point=point) for point, cfg in points]
        created = SimulationRun.objects.bulk_create(rows, batch_size=CREATE_BATCH)
        if any(run.pk is None for run in created):  # a backend without RETURNING
            created = list(sweep.runs.order_by("id"))
        for run in created:
            enqueue(run)
    return sweep


def start_study(*, user=None, scale: int = 1, name: str = "") -> Sweep:
    """The reference study (:func:`simulation.presets.study_configs`) as one sweep."""
    try:
        items = presets.study_configs(scale=scale)
    except ValueError as exc:
        raise ValidationError({"scale": [str(exc)]}) from None
    if len(items) > MAX_PRESET_RUNS:
        raise ValidationError({"scale": [f"{len(items)} runs, more than {MAX_PRESET_RUNS}"]})
    points = [(point, validate_config(config)) for point, config in items]
    return _create_sweep(name=name or f"Reference study (scale {scale})",
                         base={"sides": [8, 8], "concentration": 8},
                         parameters={"preset": "study", "scale": scale}, points=points,
                         user=user, preset="study")


def start_reproduction(user=None, seeds: int = 3, name: str = "") -> Sweep:
    """The reproduction report's runs (:mod:`simulation.reproduction_preset`) as one sweep."""
    try:
        items = reproduction_preset.reproduction_configs(seeds)
    except ValueError as exc:
        raise ValidationError({"seeds": [str(exc)]}) from None
    points = [(point, validate_config(config)) for point, config in items]
    return _create_sweep(name=name or f"Reproduction of Cano et al. 2026 ({seeds} seeds)",
                         base={"sides": [8, 8], "concentration": 8},
                         parameters={"preset": "reproduction", "seeds": seeds}, points=points,
                         user=user, preset="reproduction")


def with_counts(queryset):
    """Sweeps annotated with their number of runs per status (one query for a list)."""
    return queryset.annotate(**{f"n_{s}": Count("runs", filter=Q(runs__status=s))
                                for s in RunStatus.values})


def sweep_counts(sweep: Sweep) -> dict[str, int]:
    if hasattr(sweep, f"n_{RunStatus.PENDING}"):
        return {s: getattr(sweep, f"n_{s}") for s in RunStatus.values}
    rows = sweep.runs.order_by().values("status").annotate(n=Count("id"))
    return {row["status"]: row["n"] for row in rows}


def sweep_progress(sweep: Sweep, counts: dict[str, int] | None = None) -> dict[str, Any]:
    """``{total, done, succeeded, failed, cancelled, running, pending, fraction}``."""
    counts = sweep_counts(sweep) if counts is None else counts
    total = sum(counts.values())
    done = sum(n for s, n in counts.items() if s in TERMINAL_RUN_STATUSES)
    return {"total": total, "done": done,
            "succeeded": counts.get(RunStatus.SUCCEEDED, 0),
            "failed": counts.get(RunStatus.FAILED, 0),
            "cancelled": counts.get(RunStatus.CANCELLED, 0),
            "running": counts.get(RunStatus.RUNNING, 0),
            "pending": counts.get(RunStatus.PENDING, 0),
            "fraction": done / total if total else 0.0,
            "status": Sweep.derive_status(counts)}


def sweep_status_text(progress: dict[str, Any]) -> str:
    """How a sweep's status reads on the pages, from its runs' statuses (the same words
    as ``sweepStatusText`` in static/simulation/simulation.js, which updates it live).

    >>> base = {"total": 8, "done": 3, "running": 1, "failed": 0, "cancelled": 0}
    >>> sweep_status_text({**base, "status": "running"})
    'running (3 of 8 done)'
    >>> sweep_status_text({**base, "done": 0, "running": 0, "status": "pending"})
    'pending (0 of 8 done)'
    >>> sweep_status_text({**base, "done": 8, "failed": 2, "status": "failed"})
    'finished: 2 of 8 failed'
    """
    status, done, total = progress["status"], progress["done"], progress["total"]
    if status in (SweepStatus.PENDING, SweepStatus.RUNNING):
        started = done or progress.get("running", 0)
        return f"{'running' if started else 'pending'} ({done} of {total} done)"
    if status == SweepStatus.SUCCEEDED:
        return f"succeeded ({total} run{'s' if total != 1 else ''})"
    if status == SweepStatus.FAILED:
        if progress["failed"]:
            return f"finished: {progress['failed']} of {total} failed"
        return f"finished: {progress.get('cancelled', 0)} of {total} cancelled"
    if status == SweepStatus.CANCELLED:
        return "cancelled"
    return "empty (no runs)"


def result_row(run: SimulationRun) -> dict[str, Any]:
    """One flat row of the results table (``RESULT_COLUMNS``)."""
    config, summary = run.config or {}, run.summary or {}
    row = {"run": run.pk, "status": run.status}
    for key in ("policy", "pattern", "scenario", "ranks", "replicas", "routing", "vc_sets",
                "seed", "message_packets"):
        row[key] = config.get(key)
    for key in ("makespan_cycles", "target_cycles", "throughput", "latency_mean",
                "latency_p99", "cycles", "completed", "wall_seconds", "reused_from"):
        row[key] = summary.get(key)
    row["error"] = run.error
    return row


def sweep_rows(sweep: Sweep) -> list[dict[str, Any]]:
    """The flat results table of every run of the sweep so far (partial while running)."""
    runs = sweep.runs.defer("result", "log").order_by("id")
    return [result_row(run) for run in runs.iterator(chunk_size=1000)]


def cancel_sweep(sweep: Sweep) -> int:
    """Cancel every run not finished yet; returns how many."""
    with transaction.atomic():
        return sweep.runs.exclude(status__in=TERMINAL_RUN_STATUSES).update(
            status=RunStatus.CANCELLED, finished_at=timezone.now(), error="cancelled")


def delete_sweep(sweep: Sweep) -> None:
    if sweep.runs.exclude(status__in=TERMINAL_RUN_STATUSES).exists():
        raise ConflictError(f"sweep {sweep.pk} still has runs; cancel it first", field="status")
    sweep.delete()
