"""Limit/offset pagination with a hard cap, so no request can ask for everything."""

from __future__ import annotations

from rest_framework.pagination import LimitOffsetPagination

MAX_OFFSET = 10_000_000


class CappedLimitOffsetPagination(LimitOffsetPagination):
    default_limit = 50
    max_limit = 1000

    def get_offset(self, request) -> int:
        return min(super().get_offset(request), MAX_OFFSET)
