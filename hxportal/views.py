"""Framework pages: role-checked base views and the form page that hands its form to a
service. Sign-in is Django's LoginView, throttled by django-axes (hxportal/signin.py)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponsePermanentRedirect, HttpResponseRedirect
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, resolve_url
from django.templatetags.static import static
from django.utils.cache import patch_vary_headers
from django.views import View
from django.views.generic import FormView

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


class ServiceFormView(FormView):
    """A form page whose valid form goes to a service: the one place that turns a
    service's refusal into errors next to the form's fields.

    ``perform(form)`` calls the service and returns what it made, or a response of
    its own (a confirmation or preview page), which is sent as is. A refusal
    (``refusals``) is shown on the form by ``show_refusal`` and the form rendered
    again. Otherwise ``success_message`` is flashed and ``success_response`` sent:
    a redirect to ``get_success_url()``, by default ``success_url`` or the made
    object's own page.
    """

    #: What a service raises to refuse the input; anything else is a server error.
    refusals: tuple[type[Exception], ...] = (ValidationError, ConflictError)
    #: What ``perform`` made (set before the success message and redirect).
    object: Any = None

    def perform(self, form: forms.Form) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define perform(form)")

    def show_refusal(self, form: forms.Form, exc: Exception) -> None:
        add_form_errors(form, exc)

    def success_message(self, form: forms.Form, obj: Any) -> str:
        return ""

    def get_success_url(self) -> str:
        return resolve_url(self.success_url or self.object)

    def success_response(self, form: forms.Form, obj: Any) -> HttpResponseBase:
        return HttpResponseRedirect(self.get_success_url())

    def form_invalid(self, form: forms.Form) -> HttpResponseBase:
        """The form again with its errors, as a 400: the input was refused."""
        response = super().form_invalid(form)
        response.status_code = 400
        return response

    def form_valid(self, form: forms.Form) -> HttpResponseBase:
        try:
            outcome = self.perform(form)
        except self.refusals as exc:
            self.show_refusal(form, exc)
            return self.form_invalid(form)
        if isinstance(outcome, HttpResponseBase):
            return outcome
        self.object = outcome
        if message := self.success_message(form, outcome):
            messages.success(self.request, message)
        return self.success_response(form, outcome)


class FilteredListMixin:
    """A list page narrowed by ``filterset_class`` from the query string, whose
    ``page`` belongs to the pager (``templates/inc/pagination.html`` keeps the filters
    in its links). ``fixed`` filters override the query string's (a machine's node
    list stays that machine's); ``defaults`` apply when the query string does not name
the filter (``?origin=`` still asks for any). Invalid filters list nothing and answer 400; the
    template shows ``filterset.errors``."""

    filterset_class: type | None = None

    def filtered(self, queryset, defaults: dict[str, str] | None = None, **fixed: str):
        data = self.request.GET.copy()
        data.pop("page", None)
        for name, value in (defaults or {}).items():
            data.setdefault(name, value)
        for name, value in fixed.items():
            data[name] = value
        self.filterset = self.filterset_class(data, queryset=queryset)
        return self.filterset.qs if self.filterset.is_valid() else queryset.none()

    def get_context_data(self, **kwargs):
        return super().get_context_data(filterset=self.filterset, **kwargs)

    def render_to_response(self, context, **response_kwargs):
        if self.filterset.errors:
            response_kwargs.setdefault("status", 400)
        return super().render_to_response(context, **response_kwargs)


class LiveFragmentMixin:
    """A page that refreshes itself: ``static/hxportal/app.js`` asks for the same URL
    with the header ``X-HX-Live: 1`` and gets only ``live_template`` (the page's
    ``[data-live-region]`` parts), rendered from the same context, role check and
    query string; caches keep the two answers apart (``Vary``)."""

    live_template: str = ""

    @property
    def live(self) -> bool:
        return bool(self.live_template and self.request.headers.get("X-HX-Live"))

    def get_template_names(self):
        return [self.live_template] if self.live else super().get_template_names()

    def render_to_response(self, context, **response_kwargs):
        response = super().render_to_response(context, **response_kwargs)
        patch_vary_headers(response, ["X-HX-Live"])
        return response


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


class OwnedRowActionView(RoleRequiredMixin, View):
    """POST on one owned row (admins: any) that calls one service: cancel or delete.

    A subclass names the ``model``, the ``service`` (row -> result; a
    ``ConflictError`` is shown on the row's page), the success message ``done``
    (``{pk}`` and ``{result}`` filled in) and where success goes (``success_url``:
    a URL name; None: the row's page). ``nothing``: the message, as an error, when
    the service returns 0 (nothing to act on).
    """

    required_role = Role.OPERATOR
    model: type | None = None
    owner_field = "user"
    service = None
    done = ""
    nothing: str | None = None
    success_url: str | None = None

    def post(self, request, pk: int):
        row = get_object_or_404(ownership.writable(self.model.objects.all(), request.user,
                                                   self.owner_field), pk=pk)
        try:
            result = type(self).service(row)
        except ConflictError as exc:
            messages.error(request, exc.message)
            return redirect(row)
        if self.nothing is not None and result == 0:
            messages.error(request, self.nothing.format(pk=pk, result=result))
            return redirect(row)
        messages.success(request, self.message(pk, result))
        return redirect(self.success_url or row)

    def message(self, pk: int, result: Any) -> str:
        return self.done.format(pk=pk, result=result)


class LogoutView(auth_views.LogoutView):
    """Django's sign-out, with its role stated: any signed-in user, no role."""

    required_role = None


@login_not_required
def favicon(request):
    """Browsers ask for /favicon.ico on every site; the icon is the static SVG."""
    return HttpResponsePermanentRedirect(static("hxportal/favicon.svg"))
