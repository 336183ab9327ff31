"""Small argument checks shared by the spare-node modules (private)."""

from __future__ import annotations

import math
import numbers

__all__ = ["SpareTypeError", "as_finite", "as_int", "as_nonnegative", "as_positive"]


class SpareTypeError(ValueError, TypeError):
    """An argument of the wrong type.

    A ``ValueError`` (so callers validating input catch one exception class)
    that is also a ``TypeError`` (which is what it is), like numpy's
    ``AxisError``.
    """


def as_int(name: str, value: object, minimum: int | None = None) -> int:
    """Return ``value`` as a Python ``int`` or raise ``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise SpareTypeError(f"{name} must be an integer, got {value!r}")
    out = int(value)
    if minimum is not None and out < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {out}")
    return out


def as_finite(name: str, value: object) -> float:
    """Return ``value`` as a finite Python ``float`` or raise ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise SpareTypeError(f"{name} must be a real number, got {value!r}")
    out = float(value)
    if not math.isfinite(out):
        raise ValueError(f"{name} must be finite, got {out!r}")
    return out


def as_nonnegative(name: str, value: object) -> float:
    """Finite and ``>= 0``."""
    out = as_finite(name, value)
    if out < 0:
        raise ValueError(f"{name} must be >= 0, got {out!r}")
    return out


def as_positive(name: str, value: object) -> float:
    """Finite and ``> 0``."""
    out = as_finite(name, value)
    if out <= 0:
        raise ValueError(f"{name} must be > 0, got {out!r}")
    return out
