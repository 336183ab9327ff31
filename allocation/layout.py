"""Where each node sits and what it is called: pure helpers, no database.

Endpoint ``index`` = switch index * c + local; the switch index is the
row-major (C order) index of the coordinates, the convention of
``allocation.hyperx``.
"""

from __future__ import annotations

import math
import re
import string
from dataclasses import dataclass

import numpy as np

MAX_DIMENSIONS = 8
MAX_SIDE = 4096
MAX_CONCENTRATION = 4096
MAX_NODES = 1_048_576
#: The most a request may name as a switch coordinate, or as the slot of a formula
#: partition (an n x n machine with c = n has n). Both stay below a side, so MAX_SIDE
#: bounds them; past the machine's own, an index is refused, a coordinate matches nothing.
MAX_COORDINATE = MAX_SIDE
MAX_PARTITION_INDEX = MAX_SIDE
PATTERN_FIELDS = {"machine", "n", "i", "s", "l"} | {f"d{k}" for k in range(MAX_DIMENSIONS)}
_SPEC = r"^0?[1-9]?\d?d?$"


class LayoutError(ValueError):
    """A machine description that cannot be built; ``field`` names the culprit."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class MachineShape:
    sides: tuple[int, ...]
    concentration: int

    @property
    def switch_count(self) -> int:
        return math.prod(self.sides)

    @property
    def node_count(self) -> int:
        return self.switch_count * self.concentration


def validate_shape(sides: object, concentration: object) -> MachineShape:
    """Check sides and concentration; raise :class:`LayoutError` naming the field.

    >>> validate_shape([8, 8], 8).node_count
    512
    """
    if not isinstance(sides, (list, tuple)) or not sides:
        raise LayoutError("sides", "must be a non-empty list of integers, e.g. [8, 8]")
    if len(sides) > MAX_DIMENSIONS:
        raise LayoutError("sides", f"at most {MAX_DIMENSIONS} dimensions are supported")
    for side in sides:
        if isinstance(side, bool) or not isinstance(side, int):
            raise LayoutError("sides", f"every side must be an integer, got {side!r}")
        if side < 1 or side > MAX_SIDE:
            raise LayoutError("sides", f"every side must be between 1 and {MAX_SIDE}, got {side}")
    if isinstance(concentration, bool) or not isinstance(concentration, int):
        raise LayoutError("concentration", "must be an integer")
    if concentration < 1 or concentration > MAX_CONCENTRATION:
        raise LayoutError("concentration", f"must be between 1 and {MAX_CONCENTRATION}")
    shape = MachineShape(tuple(sides), concentration)
    if shape.node_count > MAX_NODES:
        raise LayoutError("sides", f"the machine would have {shape.node_count} nodes; "
                                   f"at most {MAX_NODES} are allowed")
    return shape


def default_hostname_pattern(name: str, node_count: int) -> str:
    """``hx{n:03d}`` for a machine ``hx`` of 512 nodes: hx001 .. hx512."""
    width = len(str(node_count))
    return f"{name}{{n:0{width}d}}"


def validate_hostname_pattern(pattern: str) -> None:
    """Allow only the documented fields and integer format specs (no attribute access)."""
    if len(pattern) > 128:
        raise LayoutError("hostname_pattern", "longer than 128 characters")
    fields = []
    try:
        parsed = list(string.Formatter().parse(pattern))
    except ValueError as exc:
        raise LayoutError("hostname_pattern", f"malformed: {exc}") from exc
    for _, field, spec, conversion in parsed:
        if field is None:
            continue
        if field not in PATTERN_FIELDS:
            raise LayoutError("hostname_pattern",
                              f"unknown field {{{field}}}; use machine, n, i, s, l, d0, d1, ...")
        if conversion or not re.match(_SPEC, spec or ""):
            raise LayoutError("hostname_pattern", f"format spec {spec!r} is not allowed")
        fields.append(field)
    if not any(f in {"n", "i"} for f in fields) and not (
            {"s", "l"} <= set(fields)
            or ("l" in fields and any(f.startswith("d") for f in fields))):
        raise LayoutError("hostname_pattern", "must contain {n} or {i} (or switch and local)")


def node_coordinates(shape: MachineShape) -> np.ndarray:
    """(node_count, q) switch coordinates of every endpoint, in index order."""
    switches = np.arange(shape.switch_count)
    coords = np.stack(np.unravel_index(switches, shape.sides), axis=1)
    return np.repeat(coords, shape.concentration, axis=0)


def pattern_hostnames(shape: MachineShape, pattern: str, machine: str) -> list[str]:
    """Hostnames from a validated pattern, one per endpoint in index order."""
    validate_hostname_pattern(pattern)
    coords = node_coordinates(shape).tolist()
    c = shape.concentration
    names = []
    for i, xs in enumerate(coords):
        fields = {"machine": machine, "n": i + 1, "i": i, "s": i // c, "l": i % c}
        fields.update({f"d{k}": x for k, x in enumerate(xs)})
        names.append(pattern.format(**fields))
    if len(set(names)) != len(names):
        raise LayoutError("hostname_pattern", "does not give every node a distinct hostname")
    return names
