"""The shape of a HyperX machine: its sides and concentration, and what follows.

One type owns "switches = product of the sides, nodes = switches x concentration",
the checks of a shape and the maps between an endpoint, its switch and its
coordinates. The database's machine (``Machine.geometry``), the engine's
configuration (``SimConfig.geometry``) and the topology (:class:`HyperX` is a
shape with links) all read these from here.

Conventions: ``switch_index = np.ravel_multi_index(coords, sides)`` (C order)
and ``endpoint = switch_index * concentration + local``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

__all__ = ["MAX_CONCENTRATION", "MAX_DIMENSIONS", "MAX_SIDE", "MachineShape", "ShapeError"]

#: Bounds of a machine the portal stores (the engine bounds its own by node count).
MAX_DIMENSIONS = 8
MAX_SIDE = 4096
MAX_CONCENTRATION = 4096


class ShapeError(ValueError):
    """A shape that cannot be built; ``field`` names the culprit (sides or concentration)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@lru_cache(maxsize=32)
def _switch_coords(sides: tuple[int, ...]) -> np.ndarray:
    coords = np.stack(np.unravel_index(np.arange(math.prod(sides)), sides), axis=1)
    coords = coords.astype(np.int64)
    coords.setflags(write=False)
    return coords


def _sides(sides: object) -> tuple[int, ...]:
    if isinstance(sides, (numbers.Integral, str)) or not hasattr(sides, "__iter__"):
        raise ShapeError("sides", f"must be a non-empty list of integers, e.g. [8, 8]; "
                                  f"got {sides!r}")
    out = tuple(sides)
    if not out:
        raise ShapeError("sides", "must be a non-empty list of integers, e.g. [8, 8]")
    for side in out:
        if isinstance(side, bool) or not isinstance(side, numbers.Integral):
            raise ShapeError("sides", f"every side must be an integer, got {side!r}")
        if side < 1:
            raise ShapeError("sides", f"every side must be an integer >= 1, got {side}")
    return tuple(int(s) for s in out)


def _concentration(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ShapeError("concentration", f"must be an integer >= 1, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class MachineShape:
    """Sides (switches per dimension) and concentration (endpoints per switch).

    Built from any sequence of integers (numpy's too); raises :class:`ShapeError`
    naming the field otherwise.

    Examples
    --------
    >>> shape = MachineShape((8, 8), 8)
    >>> shape.dimensions, shape.switch_count, shape.node_count
    (2, 64, 512)
    >>> shape.switch_index((1, 2)), shape.switch_of([0, 7, 8]).tolist()
    (10, [0, 0, 1])
    >>> MachineShape((4, 0), 1)
    Traceback (most recent call last):
    ...
    allocation.hyperx.shape.ShapeError: sides: every side must be an integer >= 1, got 0
    """

    sides: tuple[int, ...]
    concentration: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "sides", _sides(self.sides))
        object.__setattr__(self, "concentration", _concentration(self.concentration))

    # ------------------------------------------------------------------ sizes
    @property
    def dimensions(self) -> int:
        """Number of dimensions q."""
        return len(self.sides)

    @property
    def switch_count(self) -> int:
        """Number of switches, the product of the sides."""
        return math.prod(self.sides)

    @property
    def node_count(self) -> int:
        """Number of endpoints (compute nodes), switches x concentration."""
        return self.switch_count * self.concentration

    @property
    def label(self) -> str:
        """How pages show the shape.

        >>> MachineShape([8, 8], 4).label
        '8x8, c = 4'
        """
        return "x".join(str(s) for s in self.sides) + f", c = {self.concentration}"

    # ------------------------------------------------------------- checking
    def check_bounds(self, max_nodes: int, *, max_dimensions: int | None = None,
                     max_side: int | None = None,
                     max_concentration: int | None = None) -> MachineShape:
        """This shape, or :class:`ShapeError` when it is larger than the bounds given.

        >>> MachineShape((4, 4), 4).check_bounds(64).node_count
        64
        >>> try:
        ...     MachineShape((4, 4), 4).check_bounds(32)
        ... except ShapeError as exc:
        ...     print(exc)
        sides: the machine would have 64 nodes; at most 32 are allowed
        """
        if max_dimensions is not None and self.dimensions > max_dimensions:
            raise ShapeError("sides", f"at most {max_dimensions} dimensions are supported")
        if max_side is not None and max(self.sides) > max_side:
            raise ShapeError("sides", f"every side must be between 1 and {max_side}, "
                                      f"got {max(self.sides)}")
        if max_concentration is not None and self.concentration > max_concentration:
            raise ShapeError("concentration", f"must be between 1 and {max_concentration}")
        if self.node_count > max_nodes:
            raise ShapeError("sides", f"the machine would have {self.node_count} nodes; "
                                      f"at most {max_nodes} are allowed")
        return self

    # ------------------------------------------------------------ coordinates
    def switch_coords(self) -> np.ndarray:
        """Coordinates of every switch, shape (switch_count, q), read-only (cached).

        >>> MachineShape((2, 3), 1).switch_coords()[4].tolist()
        [1, 1]
        """
        return _switch_coords(self.sides)

    def node_coords(self) -> np.ndarray:
        """Switch coordinates of every endpoint in index order, (node_count, q).

        >>> MachineShape((2, 2), 2).node_coords()[:3].tolist()
        [[0, 0], [0, 0], [0, 1]]
        """
        return np.repeat(self.switch_coords(), self.concentration, axis=0)

    def switch_of(self, endpoints) -> np.ndarray:
        """Switch index of each endpoint."""
        return np.asarray(endpoints, dtype=np.int64) // self.concentration

    def local_of(self, endpoints) -> np.ndarray:
        """Local index (0..c-1) of each endpoint on its switch."""
        return np.asarray(endpoints, dtype=np.int64) % self.concentration

    def switch_index(self, coords) -> np.ndarray | int:
        """Switch index of coordinates; ``coords`` is (q,) or (m, q)."""
        arr = np.asarray(coords, dtype=np.int64)
        if arr.ndim == 1:
            return int(np.ravel_multi_index(tuple(arr), self.sides))
        return np.ravel_multi_index(tuple(arr.T), self.sides).astype(np.int64)
