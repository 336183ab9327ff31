"""Framework pages: sign-in (rate limited) and role-checked base views."""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.utils.decorators import method_decorator

from hxportal.roles import Role, role_at_least

LOGIN_ATTEMPTS_PER_MINUTE = 10


class RoleRequiredMixin:
    """Pages state ``required_role``; viewers read, operators act, admins administer."""

    required_role: str = Role.VIEWER

    def dispatch(self, request, *args, **kwargs):
        if not role_at_least(request.user, self.required_role):
            raise PermissionDenied(f"This page needs the {self.required_role} role.")
        return super().dispatch(request, *args, **kwargs)


def _client_address(request) -> str:
    return request.META.get("REMOTE_ADDR", "unknown")


@method_decorator(login_not_required, name="dispatch")
class RateLimitedLoginView(auth_views.LoginView):
    """Django's login view with a per-address limit on POSTs."""

    def post(self, request, *args, **kwargs):
        key = f"login-attempts:{_client_address(request)}"
        attempts = cache.get_or_set(key, 0, timeout=60)
        if attempts >= LOGIN_ATTEMPTS_PER_MINUTE:
            return HttpResponse("Too many sign-in attempts; wait a minute.", status=429)
        try:
            cache.incr(key)
        except ValueError:
            cache.set(key, 1, timeout=60)
        return super().post(request, *args, **kwargs)
