"""Domain errors that services raise and the API maps to status codes."""

from __future__ import annotations


class ConflictError(Exception):
    """The change collides with existing data (HTTP 409)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.message = message
