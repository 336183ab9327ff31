"""Checkpoints of long simulation runs: where they live, how they are written and read,
and the clock that decides when (the engine has no files and no clock).

A run's state (:class:`simulation.engine.RunState`) is written every
``HX_SIM_CHECKPOINT_SECONDS`` to ``HX_CHECKPOINT_DIR/simulationrun-<id>.npz``: an
uncompressed ``.npz`` (a 65,536-node run's arrays are hundreds of MB; compressing
them would cost more than the run's minutes between saves), written beside its
final name and renamed over it, so a reader sees the last whole save or none. After
``HX_SIM_SLICE_SECONDS`` in one task the run saves and stops, and its next task
resumes from the file (``hxportal.runs.RunContinues``). The file goes when the run
ends, whatever the outcome; files of runs that ended without their worker (killed
on the last attempt) are pruned by the next run that starts.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from django.conf import settings

from hxportal.models import TERMINAL_RUN_STATUSES
from simulation.engine import RunState
from simulation.models import SimulationRun

logger = logging.getLogger(__name__)

_NAME = re.compile(r"^simulationrun-(\d+)\.npz$")
#: Entries of the file beside the run's arrays.
_CYCLE, _FINGERPRINT, _WALL, _CPU = "__cycle__", "__fingerprint__", "__wall__", "__cpu__"


@dataclass(frozen=True)
class Saved:
    """A checkpoint read back: the state, and the seconds the run had taken to get there."""

    state: RunState
    wall_seconds: float
    cpu_seconds: float


def path_for(run_id: int) -> Path:
    return Path(settings.HX_CHECKPOINT_DIR) / f"simulationrun-{run_id}.npz"


def write(path: Path, state: RunState, wall_seconds: float, cpu_seconds: float) -> None:
    """Write ``state`` to ``path`` whole or not at all (``OSError`` leaves the last save)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    try:
        with partial.open("wb") as out:
            np.savez(out, **state.arrays, **{
                _CYCLE: np.int64(state.cycle), _FINGERPRINT: np.str_(state.fingerprint),
                _WALL: np.float64(wall_seconds), _CPU: np.float64(cpu_seconds)})
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def read(path: Path) -> Saved | None:
    """The checkpoint at ``path``, or None when there is none or it cannot be read."""
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as saved:
            arrays = {name: saved[name] for name in saved.files
                      if name not in (_CYCLE, _FINGERPRINT, _WALL, _CPU)}
            state = RunState(int(saved[_CYCLE]), str(saved[_FINGERPRINT]), arrays)
            return Saved(state, float(saved[_WALL]), float(saved[_CPU]))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:  # damaged
        logger.warning("checkpoint %s cannot be read (%s): ignored", path, exc)
        return None


def remove(run_id: int) -> None:
    path_for(run_id).unlink(missing_ok=True)


def prune(keep: int | None = None) -> int:
    """Remove the checkpoints of runs that ended or no longer exist (but ``keep``'s);
    how many went."""
    folder = Path(settings.HX_CHECKPOINT_DIR)
    if not folder.is_dir():
        return 0
    ids = {int(m.group(1)): p for p in folder.iterdir() if (m := _NAME.match(p.name))}
    live = set(SimulationRun.objects.filter(pk__in=ids).exclude(
        status__in=TERMINAL_RUN_STATUSES).values_list("pk", flat=True))
    gone = [p for pk, p in ids.items() if pk not in live and pk != keep]
    for p in gone:
        p.unlink(missing_ok=True)
    return len(gone)


class Clock:
    """The engine's checkpoint hook for one task: save every ``every`` seconds, and stop
    (after a save) once the task has run ``slice_seconds`` (0: never stop).

    ``carried``: the wall and CPU seconds of the earlier slices, saved with each
    checkpoint so the finished run reports its whole cost."""

    def __init__(self, path: Path, every: float, slice_seconds: float,
                 log: Callable[[str], None], carried: tuple[float, float] = (0.0, 0.0)) -> None:
        self.path, self.every, self.slice_seconds, self.log = path, every, slice_seconds, log
        self.carried = carried
        self.started = self.last_save = time.monotonic()
        self.cpu_started = time.process_time()

    def elapsed(self) -> tuple[float, float]:
        """Wall and CPU seconds of the whole run so far, earlier slices included."""
        return (self.carried[0] + time.monotonic() - self.started,
                self.carried[1] + time.process_time() - self.cpu_started)

    def __call__(self, cycle: int, capture: Callable[[], RunState]) -> bool:
        now = time.monotonic()
        stop = self.slice_seconds > 0 and now - self.started >= self.slice_seconds
        if not stop and now - self.last_save < self.every:
            return False
        if not self._save(cycle, capture()):
            return False  # nothing to resume from: run on in this task
        self.last_save = time.monotonic()
        return stop

    def _save(self, cycle: int, state: RunState) -> bool:
        free = shutil.disk_usage(_existing_parent(self.path)).free
        if free < 2 * state.nbytes:
            self.log(f"no checkpoint at cycle {cycle}: {state.nbytes / 2**20:.0f} MiB to "
                     f"write, {free / 2**20:.0f} MiB free in {self.path.parent}")
            return False
        began = time.monotonic()
        try:
            write(self.path, state, *self.elapsed())
        except OSError as exc:
            self.log(f"no checkpoint at cycle {cycle}: {exc}")
            return False
        self.log(f"checkpoint at cycle {cycle:,} ({state.nbytes / 2**20:.0f} MiB in "
                 f"{time.monotonic() - began:.1f} s)")
        return True


def _existing_parent(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.parent
