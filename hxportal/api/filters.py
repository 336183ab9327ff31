"""Filtering shared by API and pages: strict query parameters and hostlist fields."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any

from django import forms
from django.db import models
from django_filters import rest_framework as filters
from django_filters.fields import IsoDateTimeField
from django_filters.widgets import BooleanWidget
from rest_framework.exceptions import ValidationError

from hxportal import hostlists

ALWAYS_ALLOWED = {"limit", "offset", "format", "page"}


class HostlistFormField(forms.CharField):
    """A form field that accepts a hostlist and cleans to the list of hostnames,
    refusing lists longer than ``max_nodes`` before anything is expanded."""

    def __init__(self, *args, max_nodes: int = hostlists.MAX_HOSTLIST_NODES, **kwargs):
        self.max_nodes = max_nodes
        kwargs.setdefault("max_length", hostlists.MAX_HOSTLIST_CHARS)
        super().__init__(*args, **kwargs)

    def clean(self, value):
        value = super().clean(value)
        if not value:
            return None
        try:
            return hostlists.expand(value, max_nodes=self.max_nodes)
        except hostlists.HostlistError as exc:
            # As a parameter: the text may quote a '%', which django-filter would
            # otherwise read as a format directive.
            raise forms.ValidationError("%(problem)s", params={"problem": str(exc)}) from exc


MAX_UTC_OFFSET = timedelta(hours=14)


class BoundedIsoDateTimeField(IsoDateTimeField):
    """ISO 8601 with a real-world UTC offset (PostgreSQL refuses e.g. -20:53)."""

    def clean(self, value):
        value = super().clean(value)
        if value is not None and value.utcoffset() is not None and \
                abs(value.utcoffset()) > MAX_UTC_OFFSET:
            raise forms.ValidationError("the UTC offset must be within +-14:00")
        return value


class BoundedIsoDateTimeFilter(filters.IsoDateTimeFilter):
    field_class = BoundedIsoDateTimeField


#: The yes/no words a boolean filter understands (any letter case).
BOOLEAN_WORDS = {"true": True, "1": True, "false": False, "0": False}


class StrictBooleanWidget(BooleanWidget):
    """django-filter's widget turns any word it does not know into "no filter";
    this one passes it on, so the field can refuse it."""

    def value_from_datadict(self, data, files, name):
        value = data.get(name)
        if isinstance(value, str):
            return BOOLEAN_WORDS.get(value.strip().lower(), value) if value.strip() else None
        return value


class StrictBooleanField(forms.NullBooleanField):
    """Yes, no or not given; anything else is an error naming the field."""

    widget = StrictBooleanWidget

    def to_python(self, value):
        if value is None or value == "":
            return None
        if isinstance(value, bool):
            return value
        raise forms.ValidationError("must be true or false (or 1 or 0)", code="invalid")

    def validate(self, value):
        """Not given is allowed: ``to_python`` has refused everything else."""


class StrictBooleanFilter(filters.BooleanFilter):
    """``?flag=maybe`` is a 400 naming ``flag`` (django-filter would ignore it)."""

    field_class = StrictBooleanField

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", StrictBooleanWidget)
        super().__init__(*args, **kwargs)


class HxFilterSet(filters.FilterSet):
    """The base of every filterset: boolean filters generated from model fields are
    strict too (choice, number and date filters already refuse what they cannot read)."""

    FILTER_DEFAULTS = {
        **filters.FilterSet.FILTER_DEFAULTS,
        models.BooleanField: {"filter_class": StrictBooleanFilter},
        models.NullBooleanField: {"filter_class": StrictBooleanFilter},
    }


class HostlistFilter(filters.Filter):
    """``?hostlist=hx[001-016]`` filters on hostname membership.

    ``max_nodes(data)`` gives the cap from the filter set's query data (the app
    knows its machines: a machine's node count); a list longer than that is a 400
    naming the field, refused before it is expanded."""

    field_class = HostlistFormField

    def __init__(self, *args, max_nodes: Callable[[Mapping[str, Any]], int] | None = None,
                 **kwargs):
        self.max_nodes = max_nodes
        super().__init__(*args, **kwargs)

    @property
    def field(self):
        if not hasattr(self, "_field") and self.max_nodes is not None:
            data = getattr(self.parent, "data", None) or {}
            self.extra["max_nodes"] = self.max_nodes(data)
        return super().field

    def filter(self, qs, value):
        if not value:
            return qs
        return qs.filter(**{f"{self.field_name}__in": value})


class StrictFilterBackend(filters.DjangoFilterBackend):
    """Reject query parameters the view does not understand (a typo is not 'no filter')."""

    def filter_queryset(self, request, queryset, view):
        filterset_class = self.get_filterset_class(view, queryset)
        allowed = set(ALWAYS_ALLOWED)
        if filterset_class is not None:
            allowed |= set(filterset_class.base_filters)
        allowed |= set(getattr(view, "extra_query_params", ()))
        unknown = sorted(set(request.query_params) - allowed)
        if unknown:
            raise ValidationError({name: ["unknown query parameter"] for name in unknown})
        return super().filter_queryset(request, queryset, view)
