"""Filters of benchmark results, estimates and estimation runs (API lists).

A job filter on benchmark results honours ``HX_PRIVATE_DATA``: by name, only one's
own jobs.
"""

from __future__ import annotations

from django.db.models import Q
from django_filters import rest_framework as filters

from allocation.services import queries
from health.models import BenchmarkResult, Estimate, EstimationRun
from hxportal import ownership
from hxportal.api.filters import BoundedIsoDateTimeFilter, HostlistFilter, HxFilterSet


class BenchmarkResultFilterSet(HxFilterSet):
    machine = filters.CharFilter(field_name="machine__name", max_length=64)
    job = filters.CharFilter(method="filter_job", max_length=64,
                             help_text="Portal id or external id.")
    benchmark = filters.CharFilter(max_length=64)
    hostlist = HostlistFilter(field_name="node__hostname", max_nodes=queries.hostlist_cap)
    since = BoundedIsoDateTimeFilter(field_name="measured_at", lookup_expr="gte")
    until = BoundedIsoDateTimeFilter(field_name="measured_at", lookup_expr="lte")

    class Meta:
        model = BenchmarkResult
        fields = ["machine", "job", "benchmark", "hostlist", "since", "until"]

    def filter_job(self, queryset, name, value):
        if not value:
            return queryset
        match = Q(job__external_id=value)
        if value.isdigit() and len(value) < 19:
            match |= Q(job_id=int(value))
        user = getattr(self.request, "user", None)
        if not ownership.reads_everything(user):
            match &= Q(job__owner=user)  # HX_PRIVATE_DATA: only one's own jobs by name
        return queryset.filter(match)


class EstimateFilterSet(HxFilterSet):
    machine = filters.CharFilter(field_name="machine__name", max_length=64)
    benchmark = filters.CharFilter(max_length=64)

    class Meta:
        model = Estimate
        fields = ["machine", "benchmark"]


class EstimationRunFilterSet(HxFilterSet):
    machine = filters.CharFilter(field_name="machine__name", max_length=64)

    class Meta:
        model = EstimationRun
        fields = ["machine", "status"]
