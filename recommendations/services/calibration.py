"""Calibrations: start one per machine shape and engine version, keep its table up to
date from the runs that finished, and answer a recommendation from it.

A calibration is a sweep of simulation runs (origin ``calibration``), one per point
of :func:`recommendations.calibration.default_grid`, each the same configuration as
a live prediction (:func:`~recommendations.services.predictions.prediction_settings`)
on the grid's synthetic occupancy. Its runs go through the ordinary run machinery
(leases, recovery of a killed worker, reuse of an identical stored result), so a
calibration survives worker restarts and never simulates a point twice.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import numpy as np
from celery import current_app
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from allocation.hyperx.patterns import canonical_pattern
from allocation.models import CommPattern, Machine
from hxportal.models import TERMINAL_RUN_STATUSES, RunStatus
from recommendations import constants
from recommendations.calibration import (
    OCCUPANCY_MODEL,
    CalibrationGrid,
    CalibrationTable,
    Coverage,
    build_table,
    calibrated_with_locality,
    calibration_line_exposure,
    default_grid,
    grid_points,
    line_exposure,
    point_partitions,
    synthetic_occupancy,
)
from recommendations.calibration.table import PointResult
from recommendations.choices import CalibrationStatus
from recommendations.models import Calibration
from recommendations.services.predictions import prediction_settings
from simulation import services as simulation
from simulation.models import RunOrigin, SimulationRun

__all__ = [
    "CalibratedAnswer",
    "calibrated_answer",
    "calibration_progress",
    "cancel_calibration",
    "current_calibration",
    "prepare_calibration",
    "refresh_calibration",
    "refresh_running_calibrations",
    "start_calibration",
    "start_calibration_if_missing",
    "start_missing_calibrations",
]

CALIBRATED_PATTERNS = tuple(p for p in CommPattern.values if p != CommPattern.UNKNOWN)


def _same_shape(machine: Machine) -> Q:
    return Q(sides=list(machine.sides), concentration=machine.concentration,
             engine_version=simulation.ENGINE_VERSION, occupancy_model=OCCUPANCY_MODEL)


def _is_int(value: Any, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _axis_rules(machine: Machine) -> dict[str, tuple[Any, str]]:
    """axis -> (test of one value, the message when a value fails it)."""
    nodes = machine.node_count
    return {
        "patterns": (lambda p: isinstance(p, str) and p in CALIBRATED_PATTERNS,
                     f"each must be one of {', '.join(CALIBRATED_PATTERNS)}"),
        "sizes": (lambda n: _is_int(n, 2, nodes), f"each must be an integer in 2..{nodes}"),
        "loads": (lambda u: isinstance(u, int | float) and not isinstance(u, bool)
                  and 0 <= u <= 0.9, "each must be a number in [0, 0.9]"),
        "policies": (lambda p: isinstance(p, str) and p in simulation.POLICY_NAMES,
                     f"each must be one of {', '.join(simulation.POLICY_NAMES)}"),
        "seeds": (lambda s: _is_int(s, 0, 2**31 - 1), "each must be an integer in 0..2^31-1"),
    }


def _check_grid(machine: Machine, axes: dict[str, Any] | None) -> CalibrationGrid:
    """The default grid of the machine with the axes given instead (each checked)."""
    rules = _axis_rules(machine)
    checked: dict[str, tuple] = {}
    for key, values in dict(axes or {}).items():
        if key not in rules:
            raise ValidationError({key: [f"not a calibration axis ({', '.join(rules)})"]})
        if not isinstance(values, list | tuple) or not values \
                or len(values) > constants.MAX_CALIBRATION_AXIS:
            raise ValidationError({key: [f"must be a list of 1-{constants.MAX_CALIBRATION_AXIS}"
                                         " values"]})
        if key == "patterns":
            values = [canonical_pattern(p) if isinstance(p, str) else p for p in values]
        test, message = rules[key]
        if not all(test(v) for v in values):
            raise ValidationError({key: [message]})
        checked[key] = tuple(sorted(set(values))) if key in ("sizes", "loads", "seeds") \
            else tuple(dict.fromkeys(values))
    return default_grid(machine.geometry, **checked)


def start_calibration(machine: Machine, *, user=None,
                      axes: dict[str, Any] | None = None) -> tuple[Calibration, bool]:
    """(calibration, created): a new calibration of the machine's shape on this engine,
    or the one already running for it (one at a time per shape: a second asker gets the
    first's, whatever grid it asked for).

    Only the row is made here (a request may start one): its runs, hundreds of them
    with their partitions, are created by the ``prepare`` task
    (:func:`prepare_calibration`), queued once this transaction commits."""
    grid = _check_grid(machine, axes)
    points = grid_points(grid, machine.geometry)
    if not points:
        raise ValidationError({"sizes": ["no job size of the grid fits the machine"]})
    if len(points) > constants.MAX_CALIBRATION_RUNS:
        raise ValidationError({"sizes": [f"{len(points)} runs, more than "
                                         f"{constants.MAX_CALIBRATION_RUNS}"]})
    with transaction.atomic():
        Machine.objects.select_for_update().get(pk=machine.pk)
        running = Calibration.objects.filter(_same_shape(machine),
                                             status=CalibrationStatus.RUNNING).first()
        if running is not None:
            return running, False
        calibration = Calibration.objects.create(
            machine=machine, sides=list(machine.sides), concentration=machine.concentration,
            engine_version=simulation.ENGINE_VERSION, occupancy_model=OCCUPANCY_MODEL,
            grid=grid.as_dict(),
            run_count=len(points), user=simulation.signed_in_user(user))
        _queue_prepare(calibration)
    return calibration, True


def _queue_prepare(calibration: Calibration) -> None:
    pk = calibration.pk
    transaction.on_commit(lambda: current_app.send_task(
        constants.PREPARE_CALIBRATION_TASK, args=[pk]))


def prepare_calibration(calibration_id: int) -> Calibration | None:
    """The ``prepare`` task's work: create the calibration's runs (one sweep) and queue
    them. Once only: a repeated message finds the sweep made (or the calibration
    cancelled) and does nothing."""
    with transaction.atomic():
        calibration = (Calibration.objects.select_for_update().select_related("machine")
                       .filter(pk=calibration_id).first())
        if calibration is None or calibration.sweep_id is not None \
                or calibration.status != CalibrationStatus.RUNNING:
            return calibration
        machine, grid = calibration.machine, CalibrationGrid.from_dict(calibration.grid)
        shape = machine.geometry
        runs, calibration.note = _point_runs(machine, grid, grid_points(grid, shape))
        if not runs:
            calibration.status = CalibrationStatus.FAILED
            calibration.run_count = 0
            calibration.finished_at = timezone.now()
            calibration.save(update_fields=["status", "run_count", "finished_at", "note"])
            return calibration
        calibration.sweep = simulation.create_point_sweep(
            name=f"Calibration {calibration.pk} of {machine.name} ({shape.label})",
            base={"sides": list(shape.sides), "concentration": shape.concentration},
            parameters={"preset": "calibration", **grid.as_dict()}, points=runs,
            origin=RunOrigin.CALIBRATION, preset="calibration", user=calibration.user,
            machine=machine)
        calibration.run_count = len(runs)
        calibration.save(update_fields=["sweep", "run_count", "note"])
    return calibration


def _point_runs(machine: Machine, grid: CalibrationGrid, points) -> tuple[list[tuple], str]:
    """(point, engine config, partitions) of every point a policy can place and the
    portal may simulate, and what was left out, in words (a point over
    ``HX_SIM_MAX_BYTES`` before it runs; a 65,536-node machine's take up to 0.45 GiB)."""
    shape = machine.geometry
    held = {load: synthetic_occupancy(shape, load) for load in grid.loads}
    runs, refused, unplaced = [], {}, 0
    for point in points:
        settings_ = prediction_settings(list(shape.sides), shape.concentration, point.pattern,
                                        point.node_count, point.policy,
                                        background=held[point.load].size >= 2,
                                        seed=point.seed)
        try:
            cfg = simulation.validate_config(settings_)
        except ValidationError as exc:
            field, messages = next(iter(exc.message_dict.items()))
            refused.setdefault(f"{field}: {messages[0]}", 0)
            refused[f"{field}: {messages[0]}"] += 1
            continue
        parts = point_partitions(shape, point, cfg.ranks, held[point.load])
        if parts is None:
            unplaced += 1
            continue
        runs.append((point.as_dict(), cfg, [p.tolist() for p in parts]))
    words = [f"{n} points refused ({why})" for why, n in refused.items()]
    if unplaced:
        words.append(f"{unplaced} points no policy could place")
    return runs, "; ".join(words)[:255]


def refresh_calibration(calibration: Calibration) -> Calibration:
    """Rebuild the table when more runs succeeded since it was built; when every run
    has ended, the calibration is ready (some succeeded) or failed. (Not prepared yet:
    nothing to read.) An instance read before the prepare task made the runs is
    read again, so a caller polling the one ``start_calibration`` returned sees them."""
    if calibration.status == CalibrationStatus.RUNNING and calibration.sweep_id is None:
        calibration.refresh_from_db(fields=["sweep", "status"])
    if calibration.sweep_id is None:
        return calibration
    if calibration.status != CalibrationStatus.RUNNING:
        return _with_seed_spreads(calibration)
    runs = SimulationRun.objects.filter(sweep_id=calibration.sweep_id)
    succeeded = runs.filter(status=RunStatus.SUCCEEDED).count()
    ended = runs.filter(status__in=TERMINAL_RUN_STATUSES).count()
    if succeeded == calibration.points_done and ended < calibration.run_count:
        return calibration
    with transaction.atomic():
        calibration = Calibration.objects.select_for_update().get(pk=calibration.pk)
        if calibration.status != CalibrationStatus.RUNNING:
            return calibration
        results = list(_point_results(calibration))
        calibration.table = build_table(results).as_dict()
        calibration.points_done = len(results)
        calibration.run_seconds = sum(r.seconds for r in results)
        fields = ["table", "points_done", "run_seconds"]
        if ended >= calibration.run_count:
            calibration.status = (CalibrationStatus.READY if results
                                  else CalibrationStatus.FAILED)
            calibration.finished_at = timezone.now()
            fields += ["status", "finished_at"]
        calibration.save(update_fields=fields)
    return calibration


def _with_seed_spreads(calibration: Calibration) -> Calibration:
    """A finished calibration whose table was built before tables kept their seeds'
    spread gets it, rebuilt once from the same runs (its cells are unchanged)."""
    if "spread" in calibration.table or not calibration.points_done:
        return calibration
    with transaction.atomic():
        calibration = Calibration.objects.select_for_update().get(pk=calibration.pk)
        if "spread" not in calibration.table:
            calibration.table = build_table(_point_results(calibration)).as_dict()
            calibration.save(update_fields=["table"])
    return calibration


def _point_results(calibration: Calibration):
    """Each succeeded run's point, completion and CPU time (its wall time where it
    recorded none), read as JSON keys (a run's full result holds every partition:
    thousands of endpoints a run on a large machine). A reused run's times are its
    source's, so it still estimates a live run."""
    rows = (SimulationRun.objects.filter(sweep_id=calibration.sweep_id,
                                         status=RunStatus.SUCCEEDED)
            .values_list("parameters__point", "summary__target_cycles", "summary__completed",
                         "result__cpu_seconds", "result__wall_seconds")
            .iterator(chunk_size=1000))
    for point, cycles, completed, cpu, wall in rows:
        yield PointResult(pattern=point["pattern"], node_count=int(point["node_count"]),
                          load=float(point["load"]), policy=point["policy"],
                          completion_cycles=cycles if completed else None,
                          seconds=float(cpu if cpu is not None else wall or 0.0))


def cancel_calibration(calibration: Calibration) -> Calibration:
    """Stop a running calibration: its pending runs are cancelled; what finished stays
    in its table (a cancelled calibration with results still answers). One not yet
    prepared is cancelled before it has runs."""
    if calibration.status != CalibrationStatus.RUNNING:
        return calibration
    with transaction.atomic():
        calibration = Calibration.objects.select_for_update().get(pk=calibration.pk)
        if calibration.sweep_id is not None:
            simulation.cancel_sweep(calibration.sweep)
    calibration = refresh_calibration(calibration)
    if calibration.status == CalibrationStatus.RUNNING:  # unprepared, or runs finishing
        Calibration.objects.filter(pk=calibration.pk).update(
            status=CalibrationStatus.CANCELLED, finished_at=timezone.now())
        calibration.refresh_from_db()
    return calibration


def current_calibration(machine: Machine) -> Calibration | None:
    """The calibration that answers for the machine's shape on this engine: the newest
    ready one, else the newest one with results (a running or cancelled one answers
    for the points it has), else the running one with none yet (None if no such)."""
    candidates = Calibration.objects.filter(_same_shape(machine)).exclude(
        status=CalibrationStatus.FAILED)
    for calibration in candidates:
        refresh_calibration(calibration)
    ready = candidates.filter(status=CalibrationStatus.READY).first()
    return ready or candidates.filter(points_done__gt=0).first() or candidates.filter(
        status=CalibrationStatus.RUNNING).first()


class CalibratedAnswer:
    """Completion cycles per policy for one question, from ``calibration``, how far its
    seeds lay apart there (``spread``, per policy), and the seconds one live run of it
    is expected to take (the calibration's own run times)."""

    def __init__(self, calibration: Calibration, cycles: dict[str, float],
                 coverage: Coverage, run_seconds: float | None,
                 spread: dict[str, float] | None = None) -> None:
        self.calibration = calibration
        self.cycles = cycles
        self.coverage = coverage
        self.run_seconds = run_seconds
        self.spread = spread or {}

    def note(self) -> str:
        age = timezone.now() - (self.calibration.finished_at or self.calibration.created_at)
        state = ("" if self.calibration.status == CalibrationStatus.READY
                 else f", {self.calibration.status} with {self.calibration.points_done} of "
                      f"{self.calibration.run_count} runs")
        return (f"calibrated (calibration {self.calibration.pk}, engine "
                f"{self.calibration.engine_version}, {_age(age)} old{state}; "
                f"{self.coverage.describe()})")


def _age(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    if seconds < 172_800:
        return f"{seconds // 3600} h"
    return f"{seconds // 86_400} days"


def calibrated_answer(machine: Machine, pattern: str, node_count: int,
                      load: float) -> CalibratedAnswer | None:
    """The calibration's completion cycles per policy for this job, or None when no
    calibration of the shape has results for the pattern."""
    calibration = current_calibration(machine)
    if calibration is None or not calibration.points_done:
        return None
    table = CalibrationTable.from_dict(calibration.table)
    kernel = constants.KERNELS[pattern]
    found = table.completion_cycles(kernel, node_count, load)
    if found is None:
        return None
    cycles, coverage = found
    return CalibratedAnswer(calibration, cycles, coverage,
                            table.run_seconds(kernel, node_count, load),
                            table.seed_spread(kernel, node_count, load))


#: Appended to a calibrated answer's note when the live machine is more fragmented than
#: the calibration's (docs/operations.md, "What the agreement means").
FRAGMENTED_CAVEAT = ("; no candidate has whole switches to itself here, the calibration's "
                     "did: its ranking may be far off on this fragmented machine")


def fragmentation_caveat(machine: Machine, candidates: list[dict], load: float,
                         node_count: int) -> str:
    """The caveat when no live candidate has switch locality while the calibration's
    occupancy at this load gave its switch-local policies whole switches
    (then the calibrated cycles describe placements this machine cannot give), else ''."""
    if any((c.get("properties") or {}).get("switch_locality") for c in candidates
           if not c.get("error")):
        return ""
    if not calibrated_with_locality(machine.geometry, load, node_count):
        return ""
    return FRAGMENTED_CAVEAT


#: Appended to a calibrated answer's note when its first choice's switches share their
#: lines with many more endpoints of other jobs here than on the calibration's machine
#: (docs/operations.md, "What the agreement means").
LINE_SHARING_CAVEAT = ("; its first choice, {policy}, shares the lines between its switches "
                       "with {live} endpoints of other jobs here, {calibrated} on the "
                       "calibration's machine: its calibrated time may be far too low")


def line_sharing_caveat(machine: Machine, candidates: list[dict], held: list[int],
                        load: float, node_count: int, cycles: dict[str, float]) -> str:
    """The caveat when the calibrated first choice's live candidate has more than twice
    the calibration's :func:`line_exposure`, and more than a switch's endpoints more
    (other jobs' traffic on its deroutes that the calibrated time does not include),
    else ''."""
    placed = {c["policy"]: c["endpoints"] for c in candidates
              if not c.get("error") and c["policy"] in cycles}
    if not placed:
        return ""
    best = min(placed, key=lambda policy: cycles[policy])
    shape = machine.geometry
    live = line_exposure(shape, np.asarray(placed[best], dtype=np.int64),
                         np.asarray(held, dtype=np.int64))
    calibrated = calibration_line_exposure(shape, load, best, node_count)
    if calibrated is None or live <= 2 * calibrated + shape.concentration:
        return ""
    return LINE_SHARING_CAVEAT.format(policy=best, live=live, calibrated=calibrated)


#: Appended to a calibrated answer's note when other policies come within the seed spread
#: of its first choice (docs/operations.md, "What the agreement means").
CLOSE_CALL_CAVEAT = ("; too close to call: {others} came within {gap} of the "
                     "calibrated fastest, {policy}, and the calibration's seeds of these "
                     "policies differ by up to {spread}")


def close_call(candidates: list[dict], cycles: dict[str, float],
               spread: dict[str, float]) -> list[str]:
    """The calibrated fastest placed policy and, after it, the placed policies whose
    calibrated time is above it by less than the seed spread of either (another
    placement of the same policies may well swap them: the calibration cannot order
    them); just the fastest when none is that close, [] when nothing is placed."""
    placed = sorted((c["policy"] for c in candidates
                     if not c.get("error") and c["policy"] in cycles), key=cycles.get)
    if not placed:
        return []
    best = placed[0]
    return [best] + [p for p in placed[1:] if cycles[p] / cycles[best] - 1
                     < max(spread.get(p, 0.0), spread.get(best, 0.0))]


def close_call_caveat(candidates: list[dict], cycles: dict[str, float],
                      spread: dict[str, float]) -> str:
    """The caveat naming the policies of a :func:`close_call`, else ''."""
    group = close_call(candidates, cycles, spread)
    if len(group) < 2:
        return ""
    best, others = group[0], group[1:]
    return CLOSE_CALL_CAVEAT.format(
        others=", ".join(others), policy=best,
        gap=f"{max(cycles[p] / cycles[best] - 1 for p in others):.1%}",
        spread=f"{max(spread.get(p, 0.0) for p in group):.0%}")


#: How a run stopped at ``HX_SIM_MAX_BYTES`` begins its error (the runner stores
#: ``"<exception class>: <message>"``).
MEMORY_STOPPED = "MemoryLimitReached: the run stopped at cycle"


def calibration_progress(calibration: Calibration) -> dict[str, Any]:
    """The sweep's progress (runs done of all) with the calibration's status and how
    many runs stopped at the memory limit; before its runs are made, none done of
    the grid's points."""
    if calibration.sweep_id is not None:
        progress = simulation.sweep_progress(calibration.sweep)
    else:
        total = calibration.run_count
        done = total if calibration.status == CalibrationStatus.READY else 0
        progress = {"total": total, "done": done, "succeeded": 0, "failed": 0,
                    "cancelled": 0, "running": 0, "pending": total - done,
                    "fraction": done / total if total else 0.0}
    memory_stopped = 0
    if calibration.sweep_id is not None and progress["failed"]:
        memory_stopped = SimulationRun.objects.filter(
            sweep_id=calibration.sweep_id, status=RunStatus.FAILED,
            error__startswith=MEMORY_STOPPED).count()
    return {**progress, "memory_stopped": memory_stopped,
            "calibration_status": calibration.status,
            "points_done": calibration.points_done, "prepared": calibration.sweep_id is not None}


def start_missing_calibrations() -> list[Calibration]:
    """Beat: start a calibration for each machine shape that has none on this engine
    (``HX_CALIBRATE_AUTOMATICALLY``; one machine per shape is enough)."""
    if not settings.HX_CALIBRATE_AUTOMATICALLY:
        return []
    started, seen = [], set()
    for machine in Machine.objects.order_by("id"):
        key = (tuple(machine.sides), machine.concentration)
        if key in seen:
            continue
        seen.add(key)
        calibration, created = start_calibration_if_missing(machine)
        if created:
            started.append(calibration)
    return started


def refresh_running_calibrations() -> int:
    """Beat: refresh every running calibration (its table grows as runs finish), and
    queue again the ``prepare`` of one still without runs after
    ``constants.PREPARE_GRACE_SECONDS`` (its message was lost with a worker)."""
    running = list(Calibration.objects.filter(status=CalibrationStatus.RUNNING))
    stale = timezone.now() - timedelta(seconds=constants.PREPARE_GRACE_SECONDS)
    for calibration in running:
        if calibration.sweep_id is None and calibration.created_at < stale:
            current_app.send_task(constants.PREPARE_CALIBRATION_TASK, args=[calibration.pk])
        refresh_calibration(calibration)
    return len(running)


def start_calibration_if_missing(machine: Machine) -> tuple[Calibration | None, bool]:
    """(the shape's latest calibration on this engine, started now?): one is started
    only when the shape has none at all and ``HX_CALIBRATE_AUTOMATICALLY`` is on; a
    failed or cancelled one is not restarted behind the operator's back (its note
    says why it failed; the page, the API or ``hx_calibrate`` start a new one)."""
    latest = Calibration.objects.filter(_same_shape(machine)).first()
    if latest is not None or not settings.HX_CALIBRATE_AUTOMATICALLY:
        return latest, False
    return start_calibration(machine)
