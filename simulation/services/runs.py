"""Simulation runs: create (or reuse an identical result), execute through the
tracked-run runner, summarise, cancel, delete."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from hxportal import handover, ownership
from hxportal.errors import ConflictError
from hxportal.models import TERMINAL_RUN_STATUSES, RunStatus
from hxportal.runs import RunContinues, RunReporter, enqueue, execute
from simulation.engine import ENGINE_VERSION, SimConfig, Suspended, simulate
from simulation.engine.checkpoint import CheckpointMismatch
from simulation.models import SimulationRun, Sweep
from simulation.services import checkpoints
from simulation.services.configs import (
    canonical_config,
    config_hash,
    describe,
    machine_partitions,
    parse_config,
    validate_config,
    with_machine,
)


def signed_in_user(user):
    return user if getattr(user, "is_authenticated", False) else None


def new_run(cfg: SimConfig, *, user=None, sweep: Sweep | None = None, machine=None,
             partitions: list[list[int]] | None = None,
             point: dict[str, Any] | None = None) -> SimulationRun:
    config = canonical_config(cfg)
    parameters: dict[str, Any] = {}
    if point:
        parameters["point"] = point
    if partitions:
        # As [start, stop) ranges: a calibration's held endpoints are a few long runs,
        # tens of thousands of endpoints on a large machine.
        parameters["partition_ranges"] = [ranges_of(p) for p in partitions]
    return SimulationRun(config=config, engine_version=ENGINE_VERSION,
                         config_hash=config_hash(config, partitions), seed=cfg.seed,
                         sweep=sweep, machine=machine, user=signed_in_user(user),
                         parameters=parameters)


def ranges_of(endpoints) -> list[list[int]]:
    """``[[start, stop], ...]`` of the endpoints in their order (consecutive ids merge).

    >>> ranges_of([4, 5, 6, 9, 2, 3])
    [[4, 7], [9, 10], [2, 4]]
    """
    out: list[list[int]] = []
    for e in map(int, endpoints):
        if out and out[-1][1] == e:
            out[-1][1] = e + 1
        else:
            out.append([e, e + 1])
    return out


def has_partitions(parameters: dict[str, Any]) -> bool:
    """Whether a run names its partitions (else the allocation core placed its job)."""
    return bool(parameters.get("partition_ranges") or parameters.get("partitions"))


def stored_partitions(parameters: dict[str, Any]) -> list[np.ndarray] | None:
    """A run's explicit partitions, from ranges (or the plain lists of older runs)."""
    if ranges := parameters.get("partition_ranges"):
        return [np.concatenate([np.arange(a, b, dtype=np.int64) for a, b in part])
                if part else np.zeros(0, dtype=np.int64) for part in ranges]
    if plain := parameters.get("partitions"):
        return [np.asarray(p, dtype=np.int64) for p in plain]
    return None


def start_run(config: Any, *, user=None, machine=None) -> SimulationRun:
    """Create a run and enqueue it after commit, or copy a stored identical result."""
    cfg = validate_config(with_machine(config, machine))
    partitions = machine_partitions(machine, cfg) if machine is not None else None
    with transaction.atomic():
        run = new_run(cfg, user=user, machine=machine, partitions=partitions)
        run.save()
        source = reusable_source(run)
        if source is not None:
            _store_reused(run, source)
        else:
            enqueue(run)
    return run


def _stored(config_hash_: str, engine_version: str = ENGINE_VERSION):
    """Succeeded runs of one configuration hash, of every origin, oldest first."""
    return (SimulationRun.objects.filter(config_hash=config_hash_,
                                         engine_version=engine_version,
                                         status=RunStatus.SUCCEEDED)
            .order_by("finished_at", "id"))


def reusable_source(run: SimulationRun) -> SimulationRun | None:
    """A succeeded run with the same hash: the oldest (never a reused copy's copy
    chain), or under ``HX_PRIVATE_DATA`` the owner's own oldest when there is one."""
    identical = _stored(run.config_hash, run.engine_version).exclude(pk=run.pk)
    if not _names_any_source(run):
        own = identical.filter(user_id=run.user_id).first()
        if own is not None:
            return own
    return identical.first()


def _names_any_source(run: SimulationRun) -> bool:
    """True when the run's owner may read every run, so may learn any source's id."""
    return ownership.reads_everything(run.user)


def _reused_result(source: SimulationRun, run: SimulationRun) -> dict[str, Any]:
    """The source's result for ``run``; ``reused_from`` names the source only if the
    run's owner may read it (under ``HX_PRIVATE_DATA`` another's run stays unnamed)."""
    result = dict(source.result or {})
    if _names_any_source(run):
        result["reused_from"] = result.get("reused_from") or source.pk
    else:
        result["reused_from"] = source.pk if source.user_id == run.user_id else None
    result["reused"] = True
    return result


def _reuse_line(result: dict[str, Any]) -> str:
    named = f"run {result['reused_from']}" if result["reused_from"] else "an earlier run"
    return f"identical to {named}: result reused, not simulated"


def _store_reused(run: SimulationRun, source: SimulationRun) -> None:
    now = timezone.now()
    run.result = _reused_result(source, run)
    run.status = RunStatus.SUCCEEDED
    run.progress = 1.0
    run.started_at = run.finished_at = now
    run.log = [f"{now:%H:%M:%S} {_reuse_line(run.result)}"]
    run.wall_seconds = 0.0
    run.summary = {**summarise(run.result), "wall_seconds": 0.0}
    run.save()


def simulate_work(run: SimulationRun, reporter: RunReporter) -> dict[str, Any]:
    """The work of one run (outside any transaction): reuse or simulate."""
    source = reusable_source(run)
    if source is not None:
        result = _reused_result(source, run)
        reporter.log(_reuse_line(result))
        return result
    cfg = SimConfig.from_dict(run.config)
    partitions = stored_partitions(run.parameters)
    reporter.log(f"simulating {describe(run.config)} (attempt {run.attempts})")
    checkpoints.prune(keep=run.pk)
    path = checkpoints.path_for(run.pk)
    saved = checkpoints.read(path)
    clock = _slice_clock(run, path, saved, reporter)
    try:
        res = _simulate_from(cfg, partitions, reporter, clock, saved)
    except Suspended as stop:
        wall = clock.elapsed()[0]
        why = "the worker is stopping: " if clock.handed_over else ""
        raise RunContinues(f"{why}continues in a new task from its checkpoint at cycle "
                           f"{stop.cycle:,} ({wall:.0f} s so far)") from None
    except Exception:  # the run ends here (failed, cancelled); a killed process keeps it
        checkpoints.remove(run.pk)
        raise
    checkpoints.remove(run.pk)
    wall, cpu = clock.elapsed()
    result = res.as_dict()
    result["wall_seconds"] = wall
    # A busy host stretches wall time; the CPU time is what another run will need.
    result["cpu_seconds"] = cpu
    makespan = result["makespan_cycles"]
    reporter.log(f"done in {wall:.2f} s: {result['cycles']} cycles, makespan "
                 f"{makespan if makespan is not None else 'n/a'}")
    return result


def _slice_clock(run: SimulationRun, path: Path, saved: checkpoints.Saved | None,
                 reporter: RunReporter) -> checkpoints.Clock:
    """When this task saves and stops. A continuation whose checkpoint is not on this
    host (``HX_CHECKPOINT_DIR`` not shared) starts over and runs to its end in this
    task, else it would start over in every slice."""
    slice_seconds = settings.HX_SIM_SLICE_SECONDS
    if saved is not None:
        reporter.log(f"resuming from its checkpoint at cycle {saved.state.cycle:,} "
                     f"({saved.wall_seconds:.0f} s of simulation before)")
    elif path.exists():
        reporter.log(f"its checkpoint {path} cannot be read: starting over")
    elif run.continued:
        reporter.log(f"its checkpoint is not in {path.parent} on this host (HX_CHECKPOINT_DIR "
                     "must be shared by the workers): starting over, in one task")
        slice_seconds = 0
    carried = (saved.wall_seconds, saved.cpu_seconds) if saved is not None else (0.0, 0.0)
    return checkpoints.Clock(path, settings.HX_SIM_CHECKPOINT_SECONDS, slice_seconds,
                             reporter.log, carried, handover=handover.requested)


def _simulate_from(cfg: SimConfig, partitions, reporter: RunReporter,
                   clock: checkpoints.Clock, saved: checkpoints.Saved | None):
    """Simulate, from the checkpoint when it is this run's (else from the start)."""
    run_it = partial(simulate, cfg, partitions, progress=reporter.progress,
                     memory_limit=settings.HX_SIM_MAX_BYTES, checkpoint=clock)
    if saved is None:
        return run_it()
    try:
        return run_it(resume=saved.state)
    except CheckpointMismatch as mismatch:
        reporter.log(f"its checkpoint is not usable ({mismatch}): starting over")
        clock.carried = (0.0, 0.0)
        return run_it()


def stored_result(cfg: SimConfig, partitions: list[np.ndarray] | None, *, origin: str,
                  user=None, machine=None,
                  progress: Callable[[float], None] | None = None) -> tuple[dict[str, Any], bool]:
    """(result, reused) of one configuration on explicit partitions, simulated at most
    once: a succeeded run of any origin with the same configuration hash (a sweep's,
    a prediction's, a calibration's) answers; otherwise this simulates in the calling
    process and stores the result as a succeeded run of ``origin`` for the next asker.

    For work that already runs on a worker (a recommendation's prediction): there is
    no task of its own, and no lease to take, since nothing else waits on the row."""
    config = canonical_config(cfg)
    parts = [list(map(int, p)) for p in partitions] if partitions else None
    key = config_hash(config, parts)
    source = _stored(key).only("result").first()
    if source is not None:
        return dict(source.result or {}), True
    started, cpu = time.perf_counter(), time.process_time()
    res = simulate(cfg, [np.asarray(p, dtype=np.int64) for p in parts] if parts else None,
                   progress=progress, memory_limit=settings.HX_SIM_MAX_BYTES)
    wall = time.perf_counter() - started
    result = {**res.as_dict(), "wall_seconds": wall, "cpu_seconds": time.process_time() - cpu}
    now = timezone.now()
    run = new_run(cfg, user=user, machine=machine, partitions=parts)
    run.origin = origin
    run.result = result
    run.status = RunStatus.SUCCEEDED
    run.progress = 1.0
    run.attempts = 1
    run.started_at, run.finished_at = now - timedelta(seconds=wall), now
    run.log = [f"{now:%H:%M:%S} simulated for a {origin} in {wall:.2f} s"]
    run.wall_seconds = wall
    run.summary = {**summarise(result), "wall_seconds": wall}
    run.save()
    return result, False


def _store_summary(run: SimulationRun) -> None:
    result = run.result or {}
    run.wall_seconds = 0.0 if result.get("reused") or result.get("reused_from") else float(
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


def simulate_inline(config: Any, checkpoint: Path | None = None, every: float | None = None,
                    log: Callable[[str], None] = print,
                    stop_requested: Callable[[], bool] = lambda: False) -> dict[str, Any]:
    """Run one simulation in this process (no database): the CLI.

    With ``checkpoint`` the run saves its state there every ``every`` seconds
    (``HX_SIM_CHECKPOINT_SECONDS``), resumes from it when the file is there (an
    earlier run of the same command that was stopped), and removes it at the end;
    once ``stop_requested()`` it saves after its current chunk and raises the
    engine's ``Suspended``. Raises ``ValueError`` with the engine's message for a
    bad configuration, or when the file is another run's checkpoint.
    """
    cfg = parse_config(config)
    started = time.perf_counter()
    if checkpoint is None:
        res = simulate(cfg)
        result = res.as_dict()
        result["wall_seconds"] = time.perf_counter() - started
        return result
    saved = checkpoints.read(checkpoint)
    if saved is None and checkpoint.exists():
        raise ValueError(f"{checkpoint} is not a checkpoint that can be read: remove it, or "
                         "give another path")
    if saved is not None:
        log(f"resuming from {checkpoint} at cycle {saved.state.cycle:,}")
    clock = checkpoints.Clock(checkpoint, every or settings.HX_SIM_CHECKPOINT_SECONDS, 0, log,
                              (saved.wall_seconds, saved.cpu_seconds) if saved else (0.0, 0.0),
                              handover=stop_requested)
    try:
        res = simulate(cfg, checkpoint=clock, resume=saved.state if saved else None)
    except CheckpointMismatch as mismatch:
        raise ValueError(f"{checkpoint}: {mismatch}; remove it, or give another path") from None
    checkpoint.unlink(missing_ok=True)
    result = res.as_dict()
    result["wall_seconds"], result["cpu_seconds"] = clock.elapsed()
    return result
