"""The calibration table: mean simulated completion time per (pattern, load, job
size, policy), and the answer for any job size and load by interpolation.

Interpolation is in log completion time (policies differ by factors, and a
factor is what the ranking reads), piecewise linear in log2 of the job size at
each calibrated load, then linear in the load. Outside the calibrated range the
nearest row answers (clamped), and :class:`Coverage` says so.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

__all__ = ["CalibrationTable", "Coverage", "PointResult", "build_table"]


@dataclass(frozen=True)
class PointResult:
    """One finished calibration simulation."""

    pattern: str
    node_count: int
    load: float
    policy: str
    completion_cycles: float | None  # None: the run did not complete
    seconds: float  # CPU seconds of the run (wall seconds where none were recorded)


@dataclass(frozen=True)
class Coverage:
    """What an answer rests on: the calibrated sizes and loads around the request
    (equal bounds: an exact grid value) and whether it lies outside the grid."""

    sizes: tuple[int, int]
    loads: tuple[float, float]
    clamped: bool

    def describe(self) -> str:
        size = (f"{self.sizes[0]} nodes" if self.sizes[0] == self.sizes[1]
                else f"{self.sizes[0]}-{self.sizes[1]} nodes")
        load = (f"load {self.loads[0]:.0%}" if self.loads[0] == self.loads[1]
                else f"loads {self.loads[0]:.0%}-{self.loads[1]:.0%}")
        text = f"interpolated from {size} at {load}"
        return text + (" (outside the calibrated range: nearest point)" if self.clamped else "")


def _bracket(values: list[float], x: float) -> tuple[float, float, bool]:
    """The grid values around ``x`` and whether ``x`` lies outside them."""
    if x <= values[0]:
        return values[0], values[0], x < values[0]
    if x >= values[-1]:
        return values[-1], values[-1], x > values[-1]
    hi = next(i for i, v in enumerate(values) if v >= x)
    return values[hi - 1] if values[hi] != x else values[hi], values[hi], False


Cells = dict[str, dict[float, dict[int, dict[str, float]]]]


class CalibrationTable:
    """Per pattern: ``cells[load][size][policy]`` (mean completion cycles over seeds,
    of completed runs only), ``spread[load][size][policy]`` (how far the seeds lie
    apart: (largest - smallest) / mean; what a second placement of the same policy
    can change) and ``wall[load][size]`` (mean seconds of one run: CPU seconds, so a
    busy host does not make live runs look dearer than they are)."""

    def __init__(self, cells: Cells, wall: dict[str, dict[float, dict[int, float]]],
                 spread: Cells | None = None) -> None:
        self.cells = cells
        self.wall = wall
        self.spread = spread or {}

    # ------------------------------------------------------------ storage
    def as_dict(self) -> dict:
        """JSON-ready (keys as strings)."""
        return {"cells": _cells_as_dict(self.cells), "spread": _cells_as_dict(self.spread),
                "wall": {p: {repr(u): {str(n): w for n, w in by_n.items()}
                             for u, by_n in by_u.items()} for p, by_u in self.wall.items()}}

    @classmethod
    def from_dict(cls, data: dict) -> CalibrationTable:
        """The table ``as_dict`` wrote (one stored before seed spreads has none)."""
        wall = {p: {float(u): {int(n): float(w) for n, w in by_n.items()}
                    for u, by_n in by_u.items()} for p, by_u in data.get("wall", {}).items()}
        return cls(_cells_from_dict(data.get("cells", {})), wall,
                   _cells_from_dict(data.get("spread", {})))

    # ------------------------------------------------------------ answers
    def patterns(self) -> list[str]:
        return sorted(self.cells)

    def covers(self, pattern: str) -> bool:
        return bool(self.cells.get(pattern))

    def point_count(self) -> int:
        return sum(len(v) for by_u in self.cells.values() for by_n in by_u.values()
                   for v in by_n.values())

    def completion_cycles(self, pattern: str, node_count: int,
                          load: float) -> tuple[dict[str, float], Coverage] | None:
        """Estimated completion cycles per policy for a job of ``node_count`` nodes at
        machine ``load``, and what it rests on; None when the pattern is not calibrated.
        A policy calibrated at no load of the pattern is left out."""
        by_load = self.cells.get(pattern)
        if not by_load:
            return None
        policies = sorted({p for by_n in by_load.values() for v in by_n.values() for p in v})
        x = math.log2(max(node_count, 1))
        out: dict[str, float] = {}
        used_sizes: list[int] = []
        used_loads: list[float] = []
        clamped = False
        for policy in policies:
            loads, values = [], []
            for u in sorted(by_load):
                sizes = sorted(n for n, v in by_load[u].items() if policy in v)
                if not sizes:
                    continue
                logs = [math.log(by_load[u][n][policy]) for n in sizes]
                xs = [math.log2(n) for n in sizes]
                loads.append(u)
                values.append(float(np.interp(x, xs, logs)))
                lo, hi, out_of = _bracket(xs, x)
                used_sizes += [round(2 ** lo), round(2 ** hi)]
                clamped |= out_of
            if not loads:
                continue
            out[policy] = math.exp(float(np.interp(load, loads, values)))
            lo_u, hi_u, out_u = _bracket(loads, load)
            used_loads += [lo_u, hi_u]
            clamped |= out_u
        if not out:
            return None
        coverage = Coverage(sizes=(min(used_sizes), max(used_sizes)),
                            loads=(min(used_loads), max(used_loads)), clamped=clamped)
        return out, coverage

    def seed_spread(self, pattern: str, node_count: int, load: float) -> dict[str, float]:
        """Per policy, the largest seed spread among the calibrated points an answer for
        this job interpolates between (the same brackets as :meth:`completion_cycles`);
        a policy none of whose points has a spread (one seed, an older table) is left out."""
        by_load = self.cells.get(pattern) or {}
        spread = self.spread.get(pattern) or {}
        x = math.log2(max(node_count, 1))
        policies = sorted({p for by_n in by_load.values() for v in by_n.values() for p in v})
        out: dict[str, float] = {}
        for policy in policies:
            loads = sorted(u for u, by_n in by_load.items()
                           if any(policy in v for v in by_n.values()))
            lo_u, hi_u, _ = _bracket(loads, load)
            found = []
            for u in {lo_u, hi_u}:
                sizes = sorted(n for n, v in by_load[u].items() if policy in v)
                lo, hi, _ = _bracket([math.log2(n) for n in sizes], x)
                found += [spread[u][n][policy] for n in sizes if math.log2(n) in (lo, hi)
                          and policy in spread.get(u, {}).get(n, {})]
            if found:
                out[policy] = max(found)
        return out

    def run_seconds(self, pattern: str, node_count: int, load: float) -> float | None:
        """Estimated seconds of one live prediction run like this (interpolated the same
        way), or None when nothing of the pattern was calibrated."""
        by_load = self.wall.get(pattern)
        if not by_load:
            return None
        x = math.log2(max(node_count, 1))
        loads, values = [], []
        for u in sorted(by_load):
            sizes = sorted(by_load[u])
            loads.append(u)
            values.append(float(np.interp(x, [math.log2(n) for n in sizes],
                                          [math.log(max(by_load[u][n], 1e-3)) for n in sizes])))
        return math.exp(float(np.interp(load, loads, values)))


def _cells_as_dict(cells: Cells) -> dict:
    return {p: {repr(u): {str(n): dict(v) for n, v in by_n.items()}
                for u, by_n in by_u.items()} for p, by_u in cells.items()}


def _cells_from_dict(data: dict) -> Cells:
    return {p: {float(u): {int(n): dict(v) for n, v in by_n.items()}
                for u, by_n in by_u.items()} for p, by_u in data.items()}


def build_table(results: Iterable[PointResult]) -> CalibrationTable:
    """Mean over seeds of each (pattern, load, size, policy) whose runs all completed
    (one run that did not complete leaves the cell out: its time is unknown), and the
    seeds' spread where there are two or more."""
    sums: dict[tuple, list[float]] = {}
    failed: set[tuple] = set()
    walls: dict[tuple, list[float]] = {}
    for r in results:
        key = (r.pattern, float(r.load), int(r.node_count), r.policy)
        walls.setdefault(key[:3], []).append(float(r.seconds))
        if r.completion_cycles is None or r.completion_cycles <= 0:
            failed.add(key)
        else:
            sums.setdefault(key, []).append(float(r.completion_cycles))
    cells: Cells = {}
    spread: Cells = {}
    for (pattern, load, size, policy), values in sorted(sums.items()):
        if (pattern, load, size, policy) in failed:
            continue
        mean = sum(values) / len(values)
        cells.setdefault(pattern, {}).setdefault(load, {}).setdefault(size, {})[policy] = mean
        if len(values) > 1:
            spread.setdefault(pattern, {}).setdefault(load, {}).setdefault(size, {})[policy] = \
                (max(values) - min(values)) / mean
    wall: dict[str, dict[float, dict[int, float]]] = {}
    for (pattern, load, size), values in sorted(walls.items()):
        wall.setdefault(pattern, {}).setdefault(load, {})[size] = sum(values) / len(values)
    return CalibrationTable(cells, wall, spread)
