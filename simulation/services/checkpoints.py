"""Checkpoints of long simulation runs: where they live, how they are written and read,
and the clock that decides when (the engine has no files and no clock).

A run's state (:class:`simulation.engine.RunState`) is written every
``HX_SIM_CHECKPOINT_SECONDS`` to ``HX_CHECKPOINT_DIR/simulationrun-<id>.ckpt``: the
arrays' raw bytes behind a JSON header (a 65,536-node run's arrays are hundreds of
MB: compressing them would cost more than the run's minutes between saves, and a
resumed run maps them rather than holding them twice), written beside its final
name and renamed over it, so a reader sees the last whole save or none. After
``HX_SIM_SLICE_SECONDS`` in one task the run saves and stops, and its next task
resumes from the file (``hxportal.runs.RunContinues``). The file goes when the run
ends, whatever the outcome; files of runs that ended without their worker (killed
on the last attempt) are pruned by the next run that starts.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from django.conf import settings

from hxportal.models import TERMINAL_RUN_STATUSES
from simulation.engine import RunState
from simulation.models import SimulationRun

logger = logging.getLogger(__name__)

_NAME = re.compile(r"^simulationrun-(\d+)\.ckpt$")
_MAGIC = b"HXCKPT1\n"


@dataclass(frozen=True)
class Saved:
    """A checkpoint read back: the state, and the seconds the run had taken to get there."""

    state: RunState
    wall_seconds: float
    cpu_seconds: float


def path_for(run_id: int) -> Path:
    return Path(settings.HX_CHECKPOINT_DIR) / f"simulationrun-{run_id}.ckpt"


def write(path: Path, state: RunState, wall_seconds: float, cpu_seconds: float) -> None:
    """Write ``state`` to ``path`` whole or not at all (``OSError`` leaves the last save).

    The file is a JSON header (each array's type, shape and offset, and the run's
    cycle, fingerprint and seconds) followed by the arrays' bytes, each at a 64-byte
    boundary, so :func:`read` maps them instead of loading them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {name: np.ascontiguousarray(a) for name, a in state.arrays.items()}
    layout, offset = {}, 0
    for name, a in arrays.items():
        layout[name] = [a.dtype.str, list(a.shape), offset]
        offset = _aligned(offset + a.nbytes)
    header = json.dumps({"cycle": state.cycle, "fingerprint": state.fingerprint,
                         "wall_seconds": wall_seconds, "cpu_seconds": cpu_seconds,
                         "arrays": layout, "bytes": offset}).encode()
    start = _aligned(len(_MAGIC) + 8 + len(header))
    partial = path.with_name(path.name + ".partial")
    try:
        with partial.open("wb") as out:
            out.write(_MAGIC + len(header).to_bytes(8, "little") + header)
            for name, a in arrays.items():
                out.seek(start + layout[name][2])
                out.write(memoryview(a.reshape(-1)).cast("B"))
            out.truncate(start + offset)
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def read(path: Path) -> Saved | None:
    """The checkpoint at ``path``, or None when there is none or it cannot be read.

    Its arrays are read-only maps of the file: restoring a run copies them into the
    run's own arrays without a second copy of the state in memory."""
    if not path.exists():
        return None
    try:
        with path.open("rb") as f:
            if f.read(len(_MAGIC)) != _MAGIC:
                raise ValueError("not a checkpoint")
            length = int.from_bytes(f.read(8), "little")
            header = json.loads(f.read(length))
        start = _aligned(len(_MAGIC) + 8 + length)
        if path.stat().st_size != start + header["bytes"]:
            raise ValueError(f"{path.stat().st_size} bytes, not {start + header['bytes']}")
        arrays = {name: _mapped(path, start + offset, np.dtype(dtype), tuple(shape))
                  for name, (dtype, shape, offset) in header["arrays"].items()}
        state = RunState(int(header["cycle"]), str(header["fingerprint"]), arrays)
        return Saved(state, float(header["wall_seconds"]), float(header["cpu_seconds"]))
    except (OSError, ValueError, KeyError, TypeError) as exc:  # damaged: start over
        logger.warning("checkpoint %s cannot be read (%s): ignored", path, exc)
        return None


def _aligned(offset: int) -> int:
    return -(-offset // 64) * 64


def _mapped(path: Path, offset: int, dtype: np.dtype, shape: tuple) -> np.ndarray:
    if 0 in shape:
        return np.zeros(shape, dtype)
    return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape)


def remove(run_id: int) -> None:
    """Remove the run's checkpoint; a folder that refuses is logged, not the run's failure."""
    try:
        path_for(run_id).unlink(missing_ok=True)
    except OSError as exc:
        logger.warning("checkpoint of run %s not removed: %s", run_id, exc)


def prune(keep: int | None = None) -> int:
    """Remove the checkpoints of runs that ended or no longer exist (but ``keep``'s);
    how many went."""
    folder = Path(settings.HX_CHECKPOINT_DIR)
    try:
        ids = {int(m.group(1)): p for p in folder.iterdir() if (m := _NAME.match(p.name))}
    except OSError:  # no folder yet (or not one): nothing to prune
        return 0
    live = set(SimulationRun.objects.filter(pk__in=ids).exclude(
        status__in=TERMINAL_RUN_STATUSES).values_list("pk", flat=True))
    gone = [p for pk, p in ids.items() if pk not in live and pk != keep]
    for p in gone:
        try:
            p.unlink(missing_ok=True)
        except OSError as exc:
            logger.warning("checkpoint %s not pruned: %s", p, exc)
    return len(gone)


class Clock:
    """The engine's checkpoint hook for one task: save every ``every`` seconds, and stop
    (after a save) once the task has run ``slice_seconds`` (0: never stop) or as soon as
    ``handover()`` says the worker is stopping.

    ``carried``: the wall and CPU seconds of the earlier slices, saved with each
    checkpoint so the finished run reports its whole cost."""

    def __init__(self, path: Path, every: float, slice_seconds: float,
                 log: Callable[[str], None], carried: tuple[float, float] = (0.0, 0.0),
                 handover: Callable[[], bool] = lambda: False) -> None:
        self.path, self.every, self.slice_seconds, self.log = path, every, slice_seconds, log
        self.carried, self.handover = carried, handover
        self.started = self.last_save = time.monotonic()
        self.cpu_started = time.process_time()
        #: Set when the run saved and stopped because its worker is stopping.
        self.handed_over = False
        self._handover_tried = False

    def elapsed(self) -> tuple[float, float]:
        """Wall and CPU seconds of the whole run so far, earlier slices included."""
        return (self.carried[0] + time.monotonic() - self.started,
                self.carried[1] + time.process_time() - self.cpu_started)

    def __call__(self, cycle: int, capture: Callable[[], RunState]) -> bool:
        now = time.monotonic()
        # The worker is stopping (hxportal.handover): save now and hand the run over,
        # once; a folder that refuses the save leaves the run to the shutdown.
        handing_over = not self._handover_tried and self.handover()
        self._handover_tried |= handing_over
        stop = handing_over or (self.slice_seconds > 0
                                and now - self.started >= self.slice_seconds)
        if not stop and now - self.last_save < self.every:
            return False
        if not self._save(cycle, capture()):
            return False  # nothing to resume from: run on in this task
        self.last_save = time.monotonic()
        self.handed_over = handing_over
        return stop

    def _save(self, cycle: int, state: RunState) -> bool:
        """Write ``state``; False (logged) when the folder cannot take it: the run goes on."""
        began = time.monotonic()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            free = shutil.disk_usage(self.path.parent).free
            if free < 2 * state.nbytes:
                self.log(f"no checkpoint at cycle {cycle:,}: {state.nbytes / 2**20:.0f} MiB to "
                         f"write, {free / 2**20:.0f} MiB free in {self.path.parent}")
                return False
            write(self.path, state, *self.elapsed())
        except OSError as exc:
            self.log(f"no checkpoint at cycle {cycle:,}: {exc}")
            return False
        self.log(f"checkpoint at cycle {cycle:,} ({state.nbytes / 2**20:.0f} MiB in "
                 f"{time.monotonic() - began:.1f} s)")
        return True

