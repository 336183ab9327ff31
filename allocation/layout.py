"""Where each node sits and what it is called: pure helpers, no database.

Endpoint ``index`` = switch index * c + local; the switch index is the
row-major (C order) index of the coordinates, the convention of
``allocation.hyperx``.
"""

from __future__ import annotations

import re
import string

from allocation.hyperx.shape import (
    MAX_CONCENTRATION,
    MAX_DIMENSIONS,
    MAX_SIDE,
    MachineShape,
    ShapeError,
)

__all__ = ["MAX_CONCENTRATION", "MAX_DIMENSIONS", "MAX_NODES", "MAX_SIDE", "LayoutError",
           "MachineShape", "default_hostname_pattern", "pattern_hostnames",
           "validate_hostname_pattern", "validate_shape"]

MAX_NODES = 1_048_576
#: The most a request may name as a switch coordinate, or as the slot of a formula
#: partition (an n x n machine with c = n has n). Both stay below a side, so MAX_SIDE
#: bounds them; past the machine's own, an index is refused, a coordinate matches nothing.
MAX_COORDINATE = MAX_SIDE
MAX_PARTITION_INDEX = MAX_SIDE
PATTERN_FIELDS = {"machine", "n", "i", "s", "l"} | {f"d{k}" for k in range(MAX_DIMENSIONS)}
_SPEC = r"^0?[1-9]?\d?d?$"


class LayoutError(ShapeError):
    """A machine description that cannot be built; ``field`` names the culprit."""


def validate_shape(sides: object, concentration: object) -> MachineShape:
    """The shape of a machine the portal may store, or :class:`LayoutError` naming
    the field (the shape's own checks, then the portal's bounds).

    >>> validate_shape([8, 8], 8).node_count
    512
    >>> validate_shape([8, 8], 0)
    Traceback (most recent call last):
    ...
    allocation.layout.LayoutError: concentration: must be an integer >= 1, got 0
    """
    if not isinstance(sides, (list, tuple)):
        raise LayoutError("sides", "must be a non-empty list of integers, e.g. [8, 8]")
    try:
        return MachineShape(tuple(sides), concentration).check_bounds(
            MAX_NODES, max_dimensions=MAX_DIMENSIONS, max_side=MAX_SIDE,
            max_concentration=MAX_CONCENTRATION)
    except ShapeError as exc:
        raise LayoutError(exc.field, exc.message) from None


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


def pattern_hostnames(shape: MachineShape, pattern: str, machine: str) -> list[str]:
    """Hostnames from a validated pattern, one per endpoint in index order."""
    validate_hostname_pattern(pattern)
    coords = shape.node_coords().tolist()
    c = shape.concentration
    names = []
    for i, xs in enumerate(coords):
        fields = {"machine": machine, "n": i + 1, "i": i, "s": i // c, "l": i % c}
        fields.update({f"d{k}": x for k, x in enumerate(xs)})
        names.append(pattern.format(**fields))
    if len(set(names)) != len(names):
        raise LayoutError("hostname_pattern", "does not give every node a distinct hostname")
    return names
