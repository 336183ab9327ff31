"""Cutting long lists into batches that one SQL statement can take.

SQLite refuses a statement with more than 999 parameters, so ``pk__in`` lookups
and bulk writes over many rows go through :func:`chunks`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

#: Values per ``__in`` lookup: under SQLite's limit of 999 parameters, with room for
#: the statement's other parameters.
LOOKUP_CHUNK = 900

T = TypeVar("T")


def chunks(items: Sequence[T], size: int = LOOKUP_CHUNK) -> Iterator[Sequence[T]]:
    """Consecutive slices of ``items`` of at most ``size`` items, in order.

    >>> [list(c) for c in chunks([1, 2, 3, 4, 5], 2)]
    [[1, 2], [3, 4], [5]]
    """
    for start in range(0, len(items), size):
        yield items[start:start + size]
