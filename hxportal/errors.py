"""Domain errors that services raise and the API maps to status codes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.core.exceptions import ValidationError


class ConflictError(Exception):
    """The change collides with existing data (HTTP 409)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@contextmanager
def fields_renamed(names: dict[str, str]) -> Iterator[None]:
    """Re-raise a service's refusal with its fields under the names an edge uses.

    Services name the node count ``node_count`` from the edge to the core; an edge
    whose public field is named otherwise (the preview and compare API's and page's
    ``size``, the CLI's ``--size``) maps it back here, once, instead of every form
    and serializer carrying its own table.

    >>> with fields_renamed({"node_count": "size"}):
    ...     raise ValidationError({"node_count": ["too many"]})
    Traceback (most recent call last):
    ...
    django.core.exceptions.ValidationError: {'size': ['too many']}
    """
    try:
        yield
    except ValidationError as exc:
        if not hasattr(exc, "error_dict"):
            raise
        raise ValidationError({names.get(field, field): problems
                               for field, problems in exc.error_dict.items()}) from exc
    except ConflictError as exc:
        if exc.field not in names:
            raise
        raise type(exc)(exc.message, field=names[exc.field]) from exc
