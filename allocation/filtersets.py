"""One filter class per model, shared by the HTML pages and the API."""

from __future__ import annotations

from django import forms
from django.db.models import Exists, OuterRef
from django_filters import rest_framework as filters

from allocation.choices import JobSource
from allocation.layout import MAX_COORDINATE, MAX_DIMENSIONS
from allocation.models import Allocation, Job, JobStatus, Machine, Node, NodeState
from allocation.services import queries
from hxportal.api.filters import HostlistFilter, HxFilterSet, StrictBooleanFilter


class CoordsFormField(forms.CharField):
    """``3,4`` -> ``[3, 4]``: the switch coordinates, one integer per dimension."""

    def clean(self, value):
        value = super().clean(value)
        if not value:
            return None
        try:
            coords = [int(part) for part in value.split(",")]
        except ValueError as exc:
            raise forms.ValidationError("use comma-separated integers, e.g. 3,4") from exc
        if len(coords) > MAX_DIMENSIONS or any(not 0 <= c <= MAX_COORDINATE for c in coords):
            raise forms.ValidationError("coordinates out of range")
        return coords


class CoordsFilter(filters.Filter):
    field_class = CoordsFormField

    def filter(self, qs, value):
        if value is None:
            return qs
        return qs.filter(coords=value)


class MachineFilterSet(HxFilterSet):
    name = filters.CharFilter(lookup_expr="icontains", max_length=64)

    class Meta:
        model = Machine
        fields = ["name"]


class NodeFilterSet(HxFilterSet):
    machine = filters.CharFilter(field_name="machine__name", max_length=64)
    state = filters.MultipleChoiceFilter(choices=NodeState.choices)
    hostlist = HostlistFilter(field_name="hostname", max_nodes=queries.hostlist_cap)
    switch = filters.NumberFilter(field_name="switch", min_value=0, max_value=1 << 40)
    coords = CoordsFilter(max_length=200)
    allocated = StrictBooleanFilter(method="filter_allocated")

    class Meta:
        model = Node
        fields = ["machine", "state", "hostlist", "switch", "coords", "allocated"]

    def filter_allocated(self, queryset, name, value):
        """Held by an active allocation (or not); a subquery, so nodes that never had
        an allocation count as free."""
        if value is None:
            return queryset
        held = Allocation.objects.filter(node=OuterRef("pk"), released_at__isnull=True)
        return queryset.filter(Exists(held)) if value else queryset.exclude(Exists(held))


class JobFilterSet(HxFilterSet):
    machine = filters.CharFilter(field_name="machine__name", max_length=64)
    status = filters.MultipleChoiceFilter(choices=JobStatus.choices)
    external_id = filters.CharFilter(max_length=64)
    policy = filters.CharFilter(max_length=32)
    owner = filters.CharFilter(field_name="owner__username", max_length=150)
    source = filters.MultipleChoiceFilter(choices=JobSource.choices)

    class Meta:
        model = Job
        fields = ["machine", "status", "external_id", "policy", "owner", "source"]
