"""Read side of the reproduction report: a sweep's runs as records for the pure
aggregation (:mod:`simulation.reproduction`), next to the published figures
(``simulation/study_published.json``). Shared by the page and the API; writes
nothing (the sweep is started by :func:`simulation.services.start_reproduction`).
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from django.http import Http404

from hxportal import ownership
from simulation import reproduction, reproduction_preset, services
from simulation.models import Sweep, SweepStatus

PRESET = "reproduction"
DEFAULT_SEEDS = reproduction_preset.DEFAULT_SEEDS
MAX_SEEDS = reproduction_preset.MAX_SEEDS
PUBLISHED_PATH = Path(__file__).with_name("study_published.json")
#: The stored reference reproduction (``manage.py hx_reproduction_reference``).
REFERENCE_PATH = Path(__file__).with_name("reproduction_reference.json")


@lru_cache(maxsize=1)
def _published() -> dict[str, Any]:
    return json.loads(PUBLISHED_PATH.read_text(encoding="utf-8"))


def published() -> dict[str, Any]:
    """The published figures (a copy: callers may change it)."""
    return copy.deepcopy(_published())


MAX_ORDERING_SEEDS = reproduction_preset.MAX_ORDERING_SEEDS


def start_info() -> dict[str, Any]:
    """What the start form says: default and largest seeds of each kind, and the runs a
    seed of each adds (the form's script counts the runs a choice starts from these)."""
    table4, ordering = reproduction_preset.runs_per_seed()
    return {"default_seeds": DEFAULT_SEEDS, "max_seeds": MAX_SEEDS,
            "max_ordering_seeds": MAX_ORDERING_SEEDS,
            "run_count": reproduction_preset.reproduction_size(DEFAULT_SEEDS),
            "table4_runs_per_seed": table4, "ordering_runs_per_seed": ordering}


def sweeps(user):
    """Reproduction sweeps ``user`` may read, newest first."""
    return ownership.readable(Sweep.objects.filter(preset=PRESET).select_related("user"),
                              user, "user").order_by("-created_at", "-id")


def finished(sweep: Sweep) -> bool:
    """Every run of the sweep has ended and some have results (a sweep cancelled
    outright has none to show)."""
    return services.sweep_progress(sweep)["status"] in (SweepStatus.SUCCEEDED,
                                                        SweepStatus.FAILED)


def page_choice(user, sweep_id: Any = None) -> dict[str, Any]:
    """What the reproduction page shows: the sweep asked for; by default the latest
    finished sweep, or the stored reference report while none has finished, with the
    newer sweep still running (if any) named but not shown, so the headline never
    counts a sweep's first few runs as the model's agreement."""
    if sweep_id not in (None, ""):
        sweep = chosen_sweep(user, sweep_id)
        return {"sweep": sweep, "report": report(sweep), "running": None}
    running = None
    for sweep in services.with_counts(sweeps(user))[:50]:
        if finished(sweep):
            return {"sweep": sweep, "report": report(sweep), "running": running}
        running = running or sweep
    reference = reference_report()
    return {"sweep": None, "report": reference, "running": running}


@lru_cache(maxsize=1)
def _reference() -> dict[str, Any] | None:
    try:
        return json.loads(REFERENCE_PATH.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None


def reference_report() -> dict[str, Any] | None:
    """The stored reference reproduction (``manage.py hx_reproduction_reference``) as a
    report, labelled with the engine version it was computed with; None if absent."""
    stored = _reference()
    if stored is None:
        return None
    records = stored["records"]
    seeds = stored.get("seeds")
    ordering_seeds = ordering_seeds_of(seeds, stored.get("ordering_seeds"))
    expected = _expected(seeds, ordering_seeds)
    body = reproduction.aggregate(records, published(), expected)
    progress = {"total": len(records), "done": len(records), "succeeded": len(records),
                "failed": 0, "cancelled": 0, "running": 0, "pending": 0, "fraction": 1.0,
                "status": SweepStatus.SUCCEEDED}
    engine = stored.get("engine_version", "")
    placement = stored.get("placement_version")
    current = engine == services.ENGINE_VERSION and placement == services.PLACEMENT_VERSION
    return {"sweep": {"id": None, "name": "stored reference", "seeds": seeds,
                      "ordering_seeds": ordering_seeds,
                      "run_count": len(records), "created_at": stored.get("computed_at"),
                      "user": None, "page": None, "engine_versions": [engine],
                      "placement_versions": [placement] if placement else [],
                      "outdated_runs": 0 if current else len(records)},
            "reference": True, "progress": progress, **body}


def chosen_sweep(user, sweep_id: Any = None) -> Sweep | None:
    """``sweep_id``'s reproduction sweep (404 if not readable or not one), else the latest."""
    if sweep_id in (None, ""):
        return sweeps(user).first()
    try:
        pk = int(sweep_id)
    except (TypeError, ValueError):
        raise Http404("no such reproduction sweep") from None
    sweep = sweeps(user).filter(pk=pk).first()
    if sweep is None:
        raise Http404("no such reproduction sweep")
    return sweep


def seeds_of(sweep: Sweep) -> int | None:
    seeds = (sweep.parameters or {}).get("seeds")
    return seeds if isinstance(seeds, int) and not isinstance(seeds, bool) else None


def ordering_seeds_of(seeds: Any, ordering_seeds: Any) -> int | None:
    """The ordering parts' seeds of a sweep or reference stored with these parameters
    (before 2026-12-06 none was stored: :func:`reproduction_preset.legacy_ordering_seeds`)."""
    if ordering_seeds is None:
        try:
            return reproduction_preset.legacy_ordering_seeds(seeds)
        except ValueError:
            return None
    return ordering_seeds if isinstance(ordering_seeds, int) else None


def records(sweep: Sweep) -> list[dict[str, Any]]:
    """One record per run: its point, status, error and headline times."""
    out = []
    runs = sweep.runs.only("id", "status", "parameters", "summary", "error").order_by("id")
    for run in runs.iterator(chunk_size=1000):
        summary = run.summary or {}
        out.append({"run": run.pk, "point": (run.parameters or {}).get("point") or {},
                    "status": run.status, "error": run.error,
                    "completion_cycles": summary.get("target_cycles"),
                    "makespan_cycles": summary.get("makespan_cycles")})
    return out


def _expected(seeds: Any, ordering_seeds: Any) -> list[dict[str, Any]] | None:
    """The preset's points for ``seeds`` and ``ordering_seeds``."""
    if ordering_seeds is None:
        return None
    try:
        items = reproduction_preset.reproduction_configs(seeds, ordering_seeds)
    except ValueError:
        return None
    return [point for point, _ in items]


def report(sweep: Sweep) -> dict[str, Any]:
    """The aggregation of the sweep's runs against the published figures, with the
    sweep's identity and progress."""
    seeds = seeds_of(sweep)
    ordering_seeds = ordering_seeds_of(seeds, (sweep.parameters or {}).get("ordering_seeds"))
    # The points the sweep was created with, so that a deleted run shows as missing.
    expected = _expected(seeds, ordering_seeds)
    body = reproduction.aggregate(records(sweep), published(), expected)
    sweep_info = {"id": sweep.pk, "name": sweep.name, "seeds": seeds,
                  "ordering_seeds": ordering_seeds,
                  "run_count": sweep.run_count, "created_at": sweep.created_at,
                  "user": sweep.user.username if sweep.user_id else None,
                  "page": sweep.get_absolute_url(), **model_versions(sweep)}
    return {"sweep": sweep_info, "progress": services.sweep_progress(sweep), **body}


def model_versions(sweep: Sweep) -> dict[str, Any]:
    """The engine and placement versions of the sweep's runs, and how many runs were
    made by another engine or placement than today's (their figures are not today's
    model's: a sweep finished before an upgrade keeps them under the same name)."""
    engines, placements, outdated = set(), set(), 0
    rows = sweep.runs.order_by().values_list("config", "config_hash", "engine_version",
                                             "parameters")
    for config, stored_hash, engine, parameters in rows.iterator(chunk_size=1000):
        placed = not services.has_partitions(parameters or {})
        placement = services.placement_version_of(config, stored_hash, placed=placed,
                                                  engine_version=engine)
        engines.add(engine)
        if placement is not None:
            placements.add(placement)
        if engine != services.ENGINE_VERSION or placement not in (
                None, services.PLACEMENT_VERSION):
            outdated += 1
    return {"engine_versions": sorted(engines), "placement_versions": sorted(placements),
            "outdated_runs": outdated}
