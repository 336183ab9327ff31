"""View mixins shared by the apps' API views."""

from __future__ import annotations

from rest_framework import permissions

from hxportal.roles import Role, role_at_least


class OwnWritesMixin:
    """Operators change only their own rows (``owner_field``): another's is a 404,
    not a 403, so its existence is not revealed; admins change any row."""

    owner_field = "user"

    def get_queryset(self):
        queryset = super().get_queryset()
        if getattr(self, "swagger_fake_view", False):
            return queryset
        if self.request.method not in permissions.SAFE_METHODS and not role_at_least(
                self.request.user, Role.ADMIN):
            queryset = queryset.filter(**{self.owner_field: self.request.user})
        return queryset


def validated(serializer_class, request) -> dict:
    """Validate ``request.data`` with ``serializer_class`` (400 naming the field)."""
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)
