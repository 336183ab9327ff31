"""Shared by the calibration evidence scripts: the exact engine configuration of a
live prediction and of a calibration point, simulated once and cached on disk.

The configuration comes from the portal's own rule
(:func:`recommendations.services.predictions.prediction_settings`, read after
``django.setup()``; no database is touched), so what is measured here is what
the portal runs. Results are cached as JSON files keyed by the sha256 of
(configuration, partitions, engine version): a rerun simulates only what is
missing, and a run interrupted half-way keeps every finished simulation.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's code, not the one the venv points at

from allocation.hyperx import AllocationError, HyperX, MachineShape, allocate  # noqa: E402

#: Policies other (live) jobs are placed with: the site's mix of a linear
#: scheduler, the study's baseline and the random ones.
LIVE_JOB_POLICIES = ("row", "diagonal", "random_switch", "random_endpoint")


def setup_django() -> None:
    """Settings only (``prediction_settings`` reads constants that import models)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hxportal.settings.local")
    import django

    django.setup()


def default_cache_dir() -> Path:
    return Path(os.environ.get("HX_DATA_DIR", ROOT / "data")) / "benchmarks" / "calibration_cache"


#: Calibration-point runs too long to repeat with every benchmark run (the 65,536-node
#: machine's loaded points take an hour or more each), kept with the evidence: a list
#: of records in :func:`run_task`'s form, each with the command that made it.
LONG_RUNS = ROOT / "docs" / "evidence" / "long_runs.json"


def long_runs(path: Path = LONG_RUNS, engine_version: str | None = None) -> list[dict]:
    """The kept long runs (of ``engine_version`` only, when given: another engine's
    cycles are another model's)."""
    records = json.loads(path.read_text(encoding="utf-8")) if path.exists() else []
    return [r for r in records
            if engine_version is None or r["engine_version"] == engine_version]


def keep_long_run(record: dict, path: Path = LONG_RUNS) -> None:
    """Add ``record`` to the kept long runs, in place of one of the same point, machine
    size and engine version."""
    same = (record["label"], record["nodes"], record["engine_version"])
    kept = [r for r in long_runs(path) if (r["label"], r["nodes"], r["engine_version"]) != same]
    lines = ",\n".join(json.dumps(r) for r in [*kept, record])
    path.write_text(f"[\n{lines}\n]\n", encoding="utf-8")


def engine_config(shape: MachineShape, pattern: str, node_count: int, policy: str,
                  seed: int, background: bool) -> dict:
    """The engine config (a dict) the portal gives this prediction or calibration point."""
    from recommendations.services.predictions import prediction_settings
    from simulation.services import validate_config

    settings = prediction_settings(list(shape.sides), shape.concentration, pattern, node_count,
                                   policy, background=background, seed=seed)
    return validate_config(settings).to_dict()


def cache_key(config: dict, partitions: list[list[int]]) -> str:
    from simulation.engine import ENGINE_VERSION

    payload = {"config": config, "partitions": partitions, "engine_version": ENGINE_VERSION}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Task:
    """One simulation: a config on explicit partitions, with a label to report it."""

    label: tuple
    config: dict
    partitions: list[list[int]]

    @property
    def key(self) -> str:
        return cache_key(self.config, self.partitions)

    @property
    def busy(self) -> int:
        return sum(len(p) for p in self.partitions)


def cached(cache: Path, task: Task) -> dict | None:
    path = cache / f"{task.key}.json"
    if not path.exists():
        return None
    return json.loads(path.read_text())


def run_task(args: tuple[Path, Task]) -> dict:
    """Simulate ``task`` unless cached; the result's headline figures (stored)."""
    from simulation.engine import SimConfig, simulate

    cache, task = args
    found = cached(cache, task)
    if found is not None:
        return found
    cfg = SimConfig.from_dict(task.config)
    parts = [np.asarray(p, dtype=np.int64) for p in task.partitions]
    load = os.getloadavg()[0]
    started, cpu = time.perf_counter(), time.process_time()
    res = simulate(cfg, parts)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    out = res.as_dict()
    app = (out.get("apps") or [{}])[0]
    record = {"label": list(task.label), "nodes": int(np.prod(cfg.sides)) * cfg.concentration,
              "completed": bool(out.get("completed")),
              "completion_cycles": app.get("completion_cycles") if out.get("completed") else None,
              "cycles": out.get("cycles"), "wall_seconds": wall, "cpu_seconds": cpu,
              "busy_endpoints": task.busy,
              "ranks": cfg.ranks, "max_cycles": cfg.max_cycles, "load_average": load,
              "engine_version": out.get("engine_version"),
              "max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
              "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    cache.mkdir(parents=True, exist_ok=True)
    tmp = cache / f"{task.key}.tmp{os.getpid()}"
    tmp.write_text(json.dumps(record))
    tmp.replace(cache / f"{task.key}.json")
    return record


def contiguous_occupancy(shape: MachineShape, load: float) -> np.ndarray:
    """The calibration's machine before 2026-12-04 (occupancy model ``contiguous``):
    other jobs of random power-of-two sizes (concentration .. an eighth of the machine)
    placed one after another by ``row`` on a machine filled from empty, until
    ``round(load * nodes)`` endpoints are held (the last job cut to fit)."""
    want = round(load * shape.node_count)
    topology = HyperX(shape.sides, shape.concentration)
    free = np.ones(shape.node_count, dtype=bool)
    rng = np.random.default_rng(20261201)
    low = max(1, shape.concentration).bit_length() - 1
    high = max(low, (shape.node_count // 8).bit_length() - 1)
    held = 0
    while held < want:
        size = min(1 << int(rng.integers(low, high + 1)), want - held)
        taken = allocate(topology, free, "row", size)
        free[taken] = False
        held += size
    return np.nonzero(~free)[0].astype(np.int64)


def live_occupancy(shape: MachineShape, load: float, seed: int) -> np.ndarray:
    """Endpoints held by other jobs on the *live* machine: jobs of random power-of-two
    sizes (concentration .. an eighth of the machine, the synthetic range) each placed by
    a policy drawn from :data:`LIVE_JOB_POLICIES` with its own seed, until
    ``round(load * nodes)`` are held (the last job cut to fit). Another kind of machine
    than the calibration's (an aged Slurm machine), so the comparison is out of sample:
    the live jobs' sizes and placements are made otherwise."""
    want = round(load * shape.node_count)
    topology = HyperX(shape.sides, shape.concentration)
    free = np.ones(shape.node_count, dtype=bool)
    rng = np.random.default_rng(seed)
    low = max(1, shape.concentration).bit_length() - 1
    high = max(low, (shape.node_count // 8).bit_length() - 1)
    held = 0
    while held < want:
        size = min(1 << int(rng.integers(low, high + 1)), want - held)
        policy = LIVE_JOB_POLICIES[int(rng.integers(len(LIVE_JOB_POLICIES)))]
        try:
            taken = allocate(topology, free, policy, size, seed=int(rng.integers(1 << 30)),
                             busy=~free)
        except AllocationError:
            taken = allocate(topology, free, "row", size)
        free[taken] = False
        held += size
    return np.nonzero(~free)[0].astype(np.int64)


def live_tasks(shape: MachineShape, pattern: str, node_count: int, held: np.ndarray,
               policies: tuple[str, ...], seeds: tuple[int, ...], label: tuple) -> list[Task]:
    """A live prediction's runs: each policy's candidate (``allocate`` with seed 0 on the
    live occupancy, as ``jobs.compare_policies``) at each engine seed."""
    topology = HyperX(shape.sides, shape.concentration)
    free = np.ones(shape.node_count, dtype=bool)
    free[held] = False
    tasks = []
    for policy in policies:
        try:
            job = allocate(topology, free, policy, node_count, seed=0, busy=~free)
        except AllocationError:
            continue
        for seed in seeds:
            config = engine_config(shape, pattern, node_count, policy, seed, held.size >= 2)
            parts = [job[: config["ranks"]].tolist()] + ([held.tolist()] if held.size >= 2
                                                         else [])
            tasks.append(Task((*label, policy, seed), config, parts))
    return tasks


def point_task(shape: MachineShape, point, held: np.ndarray) -> Task | None:
    """A calibration point's run, exactly as ``services.calibration._point_runs``."""
    from recommendations.calibration import point_partitions

    config = engine_config(shape, point.pattern, point.node_count, point.policy, point.seed,
                           held.size >= 2)
    parts = point_partitions(shape, point, config["ranks"], held)
    if parts is None:
        return None
    return Task(("point", point.pattern, point.node_count, point.load, point.policy,
                 point.seed), config, [p.tolist() for p in parts])


def point_run(shape: MachineShape, pattern: str, node_count: int, load: float, policy: str,
              seed: int = 0):
    """(engine ``SimConfig``, partitions) of one calibration point on the grid's synthetic
    occupancy: the run the portal makes for it."""
    from recommendations.calibration.grid import (
        CalibrationPoint,
        point_partitions,
        synthetic_occupancy,
    )
    from recommendations.services.predictions import prediction_settings
    from simulation.services.configs import parse_config

    held = synthetic_occupancy(shape, load)
    cfg = parse_config(prediction_settings(list(shape.sides), shape.concentration, pattern,
                                           node_count, policy, background=held.size >= 2,
                                           seed=seed))
    point = CalibrationPoint(pattern, node_count, load, policy, seed)
    return cfg, [np.asarray(p) for p in point_partitions(shape, point, cfg.ranks, held)]


def shape_label(shape: MachineShape) -> str:
    return f"{'x'.join(map(str, shape.sides))} c={shape.concentration}"
