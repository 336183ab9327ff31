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


class RowUrlField(serializers.HyperlinkedIdentityField):
    """A row's detail URL by integer key: reversed once per response with a placeholder
    key, then filled in per row (``reverse`` per row costs a tenth of a 1,000-row
    page). Anything else (a format suffix, another key type) takes DRF's own path."""

    PLACEHOLDER = "987654321"

    def get_url(self, obj, view_name, request, format):
        key = getattr(obj, self.lookup_field, None)
        if format or isinstance(key, bool) or not isinstance(key, int):
            return super().get_url(obj, view_name, request, format)
        cache = self.context.setdefault("_row_urls", {})
        if view_name not in cache:
            url = self.reverse(view_name, kwargs={self.lookup_url_kwarg: self.PLACEHOLDER},
                               request=request, format=format)
            cache[view_name] = (url.split(self.PLACEHOLDER)
                                if url.count(self.PLACEHOLDER) == 1 else None)
        parts = cache[view_name]
        if parts is None:
            return super().get_url(obj, view_name, request, format)
        return f"{parts[0]}{key}{parts[1]}"
