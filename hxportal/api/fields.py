"""Serializer fields shared by the apps."""

from __future__ import annotations

from rest_framework import serializers


class NameRelatedField(serializers.SlugRelatedField):
    """A foreign key given by name; names with NUL characters are invalid (PostgreSQL
    text cannot hold them, so the lookup itself would fail)."""

    def to_internal_value(self, data):
        if isinstance(data, str) and "\x00" in data:
            self.fail("invalid")
        return super().to_internal_value(data)
