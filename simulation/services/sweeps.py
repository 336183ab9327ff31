"""Sweeps: the product of parameter lists over a base configuration, the
study and reproduction presets, progress derived from the runs, result rows."""

from __future__ import annotations

import itertools
import json
import math
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from hxportal.errors import ConflictError
from hxportal.models import TERMINAL_RUN_STATUSES, RunStatus
from hxportal.runs import enqueue
from hxportal.text import pluralize
from simulation import presets, reproduction_preset
from simulation.constants import (
    CREATE_BATCH,
    MAX_NAME,
    MAX_PRESET_RUNS,
    MAX_SWEEP_RUNS,
    MAX_VALUES_PER_PARAMETER,
)
from simulation.engine import SimConfig
from simulation.models import SimulationRun, Sweep, SweepStatus
from simulation.services.configs import CONFIG_FIELDS, validate_config
from simulation.services.runs import new_run, signed_in_user

#: Order in which sweep parameters vary (the rest follow alphabetically).
SWEEP_ORDER = ("policy", "pattern", "ranks", "scenario", "replicas", "routing", "vc_sets",
               "seed")


#: Columns of the flat results table (CSV / JSON download, charts).
RESULT_COLUMNS = ("run", "status", "policy", "pattern", "scenario", "ranks", "replicas",
                  "routing", "vc_sets", "seed", "message_packets", "makespan_cycles",
                  "target_cycles", "throughput", "latency_mean", "latency_p99", "cycles",
                  "completed", "wall_seconds", "reused_from", "error")


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


def create_point_sweep(*, name: str, base: dict, parameters: dict,
                       points: list[tuple[dict[str, Any], SimConfig, list[list[int]] | None]],
                       origin: str, preset: str, user=None, machine=None) -> Sweep:
    """A sweep of explicit runs, each on its own partitions (a calibration's points:
    each places the job by a policy on a synthetic occupancy). A point simulated
    before, by any origin, is reused when its run executes (same configuration hash)."""
    return _create_sweep(name=name, base=base, parameters=parameters,
                         points=[(point, cfg) for point, cfg, _ in points], user=user,
                         preset=preset, partitions=[parts for _, _, parts in points],
                         origin=origin, machine=machine)


def _create_sweep(*, name: str, base: dict, parameters: dict,
                  points: list[tuple[dict[str, Any], SimConfig]], user=None,
                  preset: str = "", partitions: list[list[list[int]] | None] | None = None,
                  origin: str = "", machine=None) -> Sweep:

    name = _check_name(name)
    with transaction.atomic():
        sweep = Sweep.objects.create(name=name, base=base, parameters=parameters,
                                     preset=preset, run_count=len(points),
                                     user=signed_in_user(user))
        parts = partitions or [None] * len(points)
        rows = [new_run(cfg, user=user, sweep=sweep, point=point, partitions=p,
                        machine=machine)
                for (point, cfg), p in zip(points, parts, strict=True)]
        if origin:
            for row in rows:
                row.origin = origin
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


def start_reproduction(user=None, seeds: int = 3, name: str = "",
                       ordering_seeds: int | None = None) -> Sweep:
    """The reproduction report's runs (:mod:`simulation.reproduction_preset`) as one
    sweep: Table 4 on ``seeds`` seeds, the two ordering parts on ``ordering_seeds``
    (``seeds`` unless given)."""
    try:
        items = reproduction_preset.reproduction_configs(seeds, ordering_seeds)
    except ValueError as exc:  # the message starts with the field it names
        field = "ordering_seeds" if str(exc).startswith("ordering_seeds") else "seeds"
        raise ValidationError({field: [str(exc)]}) from None
    ordering = seeds if ordering_seeds is None else ordering_seeds
    points = [(point, validate_config(config)) for point, config in items]
    label = (pluralize(seeds, "seed") if ordering == seeds
             else f"{pluralize(seeds, 'seed')}, orderings on {ordering}")
    return _create_sweep(name=name or f"Reproduction of Cano et al. 2026 ({label})",
                         base={"sides": [8, 8], "concentration": 8},
                         parameters={"preset": "reproduction", "seeds": seeds,
                                     "ordering_seeds": ordering}, points=points,
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
        return f"succeeded ({pluralize(total, 'run')})"
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


def study_size() -> int:
    """Runs in the study preset (what the study form announces before it starts)."""
    return presets.study_size()
