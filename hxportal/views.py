"""Framework pages: sign-in (rate limited) and role-checked base views."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.core.cache import cache
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponse, HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.utils.decorators import method_decorator

from hxportal import ownership
from hxportal.errors import ConflictError
from hxportal.roles import Role, role_at_least


def add_form_errors(form, exc: ValidationError | ConflictError) -> None:
    """Show a service's ValidationError or ConflictError on the form, field by field.

    Services name fields as the API does; a form whose fields are named otherwise
    maps them in ``service_fields`` (e.g. ``{"size": "node_count"}``), so the error
    shows next to the field it is about. Anything else goes above the fields."""
    aliases = getattr(form, "service_fields", {}) or {}

    def target(field: str | None) -> str | None:
        field = aliases.get(field, field)
        return field if field in form.fields else None

    if isinstance(exc, ConflictError):
        form.add_error(target(exc.field), exc.message)
        return
    if not hasattr(exc, "error_dict"):
        form.add_error(None, exc.messages)
        return
    for field, problems in exc.message_dict.items():
        form.add_error(target(field), problems)


class RoleRequiredMixin:
    """Pages state ``required_role``; viewers read, operators act, admins administer."""

    required_role: str = Role.VIEWER

    def dispatch(self, request, *args, **kwargs):
        if not role_at_least(request.user, self.required_role):
            raise PermissionDenied(f"This page needs the {self.required_role} role.")
        return super().dispatch(request, *args, **kwargs)


class OwnedRowsMixin:
    """Pages over owned rows read only what :mod:`hxportal.ownership` lets the user
    read (with ``HX_PRIVATE_DATA``: their own; another's is a 404)."""

    owner_field = "user"

    def get_queryset(self):
        return self.readable(super().get_queryset())

    def readable(self, queryset):
        return ownership.readable(queryset, self.request.user, self.owner_field)


def _client_address(request) -> str:
    return request.META.get("REMOTE_ADDR", "unknown")


@method_decorator(login_not_required, name="dispatch")
class RateLimitedLoginView(auth_views.LoginView):
    """Django's login view, refusing an address after too many failed attempts a minute."""

    def post(self, request, *args, **kwargs):
        key = f"login-failures:{_client_address(request)}"
        if cache.get(key, 0) >= settings.HX_LOGIN_FAILURES_PER_MINUTE:
            return HttpResponse("Too many failed sign-in attempts; wait a minute.", status=429)
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form):
        key = f"login-failures:{_client_address(self.request)}"
        if cache.add(key, 1, timeout=60) is False:
            try:
                cache.incr(key)
            except ValueError:
                cache.set(key, 1, timeout=60)
        return super().form_invalid(form)


@login_not_required
def favicon(request):
    """Browsers ask for /favicon.ico on every site; the icon is the static SVG."""
    return HttpResponsePermanentRedirect(static("hxportal/favicon.svg"))
