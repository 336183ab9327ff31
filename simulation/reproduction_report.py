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
from simulation.models import Sweep

PRESET = "reproduction"
DEFAULT_SEEDS = reproduction_preset.DEFAULT_SEEDS
MAX_SEEDS = reproduction_preset.MAX_SEEDS
PUBLISHED_PATH = Path(__file__).with_name("study_published.json")


@lru_cache(maxsize=1)
def _published() -> dict[str, Any]:
    return json.loads(PUBLISHED_PATH.read_text(encoding="utf-8"))


def published() -> dict[str, Any]:
    """The published figures (a copy: callers may change it)."""
    return copy.deepcopy(_published())


def run_count(seeds: int = DEFAULT_SEEDS) -> int:
    return reproduction_preset.reproduction_size(seeds)


def start_info() -> dict[str, int]:
    """What the start button says: default and largest seeds, runs, runs per extra seed."""
    return {"default_seeds": DEFAULT_SEEDS, "max_seeds": MAX_SEEDS,
            "run_count": run_count(DEFAULT_SEEDS),
            "runs_per_seed": run_count(MAX_SEEDS) - run_count(MAX_SEEDS - 1)}


def sweeps(user):
    """Reproduction sweeps ``user`` may read, newest first."""
    return ownership.readable(Sweep.objects.filter(preset=PRESET).select_related("user"),
                              user, "user").order_by("-created_at", "-id")


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


def expected_points(sweep: Sweep) -> list[dict[str, Any]] | None:
    """The points the sweep was created with (so a deleted run shows as missing)."""
    seeds = seeds_of(sweep)
    try:
        items = reproduction_preset.reproduction_configs(seeds)
    except ValueError:
        return None
    return [point for point, _ in items]


def report(sweep: Sweep) -> dict[str, Any]:
    """The aggregation of the sweep's runs against the published figures, with the
    sweep's identity and progress."""
    body = reproduction.aggregate(records(sweep), published(), expected_points(sweep))
    sweep_info = {"id": sweep.pk, "name": sweep.name, "seeds": seeds_of(sweep),
                  "run_count": sweep.run_count, "created_at": sweep.created_at,
                  "user": sweep.user.username if sweep.user_id else None,
                  "page": sweep.get_absolute_url()}
    return {"sweep": sweep_info, "progress": services.sweep_progress(sweep), **body}
