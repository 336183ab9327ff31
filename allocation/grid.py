"""The switch grid a page draws: planes of (row, column) cells, one per switch.

The last two coordinates are the grid's rows and columns; any leading
coordinates select a plane, so a plane is a contiguous range of switch indices.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from hxportal import hostlists


@dataclass
class SwitchCell:
    switch: int
    coords: list[int]
    nodes: list[dict] = field(default_factory=list)

    @property
    def hostlist(self) -> str:
        return hostlists.compress(n["hostname"] for n in self.nodes)

    @property
    def label(self) -> str:
        return ",".join(str(c) for c in self.coords)


@dataclass(frozen=True)
class GridShape:
    sides: tuple[int, ...]

    @property
    def rows(self) -> int:
        return self.sides[-2] if len(self.sides) >= 2 else 1

    @property
    def cols(self) -> int:
        return self.sides[-1]

    @property
    def plane_size(self) -> int:
        return self.rows * self.cols

    @property
    def planes(self) -> int:
        return math.prod(self.sides[:-2]) if len(self.sides) > 2 else 1

    def plane_labels(self) -> list[str]:
        if len(self.sides) <= 2:
            return ["all"]
        labels = []
        lead = self.sides[:-2]
        for p in range(self.planes):
            coords, rest = [], p
            for side in reversed(lead):
                coords.append(rest % side)
                rest //= side
            labels.append(", ".join(f"d{k}={v}" for k, v in enumerate(reversed(coords))))
        return labels

    def switch_range(self, plane: int) -> tuple[int, int]:
        start = plane * self.plane_size
        return start, start + self.plane_size


def build_plane(shape: GridShape, plane: int, nodes: Iterable[dict]) -> list[list[SwitchCell]]:
    """Rows of cells for one plane from node dicts (switch, coords, local, hostname, ...)."""
    start, _ = shape.switch_range(plane)
    by_switch: dict[int, list[dict]] = defaultdict(list)
    coords_of: dict[int, list[int]] = {}
    for node in nodes:
        by_switch[node["switch"]].append(node)
        coords_of[node["switch"]] = node["coords"]
    rows = []
    for r in range(shape.rows):
        row = []
        for c in range(shape.cols):
            switch = start + r * shape.cols + c
            cell_nodes = sorted(by_switch.get(switch, []), key=lambda n: n["local"])
            row.append(SwitchCell(switch, coords_of.get(switch, []), cell_nodes))
        rows.append(row)
    return rows


PALETTE_SIZE = 12


def job_palette(job_ids: Iterable[int]) -> dict[int, int]:
    """A stable colour class (0..11) per job: neighbours in id order differ."""
    return {job_id: i % PALETTE_SIZE for i, job_id in enumerate(sorted(set(job_ids)))}
