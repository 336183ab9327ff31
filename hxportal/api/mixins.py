"""View mixins shared by the apps' API views."""

from __future__ import annotations

from rest_framework import permissions

from hxportal import ownership


class OwnWritesMixin:
    """Owned rows (``owner_field``) by :mod:`hxportal.ownership`: operators change
    only their own, and with ``HX_PRIVATE_DATA`` read only their own; another's
    is a 404, not a 403, so its existence is not revealed."""

    owner_field = "user"

    def get_queryset(self):
        queryset = super().get_queryset()
        if getattr(self, "swagger_fake_view", False):
            return queryset
        if self.request.method in permissions.SAFE_METHODS:
            return ownership.readable(queryset, self.request.user, self.owner_field)
        return ownership.writable(queryset, self.request.user, self.owner_field)


def validated(serializer_class, request) -> dict:
    """Validate ``request.data`` with ``serializer_class`` (400 naming the field)."""
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)
