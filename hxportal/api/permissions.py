"""Role checks for every API view.

A view states ``read_role`` (default viewer) and ``write_role`` (default admin,
so a view that forgets to say is closed rather than open); ``action_roles`` may
override single actions. Token flags narrow further: read-only tokens may only
read, benchmark-scoped tokens may only reach views that set
``allow_benchmark_scope``, metrics-scoped tokens only views that set
``allow_metrics_scope`` (``/metrics``).
"""

from __future__ import annotations

from rest_framework import permissions

from hxportal.models import ApiToken, TokenScope
from hxportal.roles import Role, role_at_least


def required_role(view, method: str) -> str:
    action = getattr(view, "action", None)
    action_roles = getattr(view, "action_roles", {})
    if action in action_roles:
        return action_roles[action]
    if method in permissions.SAFE_METHODS:
        return getattr(view, "read_role", Role.VIEWER)
    return getattr(view, "write_role", Role.ADMIN)


class RolePermission(permissions.BasePermission):
    message = "Your role does not allow this."

    def has_permission(self, request, view) -> bool:
        user = request.user
        if not user or not user.is_authenticated:
            return False
        token = request.auth if isinstance(request.auth, ApiToken) else None
        if token is not None:
            if token.read_only and request.method not in permissions.SAFE_METHODS:
                self.message = "This token is read-only."
                return False
            if token.scope == TokenScope.BENCHMARKS and not getattr(
                    view, "allow_benchmark_scope", False):
                self.message = "This token may only upload benchmarks."
                return False
            if token.scope == TokenScope.METRICS and not getattr(
                    view, "allow_metrics_scope", False):
                self.message = "This token may only read metrics."
                return False
        return role_at_least(user, required_role(view, request.method))
