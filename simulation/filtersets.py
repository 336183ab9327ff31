"""One filter class per model, shared by the HTML pages and the API."""

from __future__ import annotations

from django_filters import rest_framework as filters

from hxportal.api.filters import HxFilterSet, StrictBooleanFilter
from hxportal.models import RunStatus
from simulation.models import RunOrigin, SimulationRun, Sweep


class SimulationRunFilterSet(HxFilterSet):
    status = filters.ChoiceFilter(choices=RunStatus.choices, empty_label="any")
    sweep = filters.NumberFilter(field_name="sweep_id", min_value=1)
    standalone = StrictBooleanFilter(field_name="sweep", lookup_expr="isnull",
                                       help_text="Only runs outside any sweep.")
    policy = filters.CharFilter(field_name="config__policy", max_length=32)
    pattern = filters.CharFilter(field_name="config__pattern", max_length=32)
    user = filters.CharFilter(field_name="user__username", max_length=150)

    class Meta:
        model = SimulationRun
        fields = ["status", "sweep", "standalone", "policy", "pattern", "user"]


class SimulationRunPageFilterSet(SimulationRunFilterSet):
    """The runs page's filters: the API's, and which runs by origin (the page shows
    submitted runs unless asked; the API lists only those)."""

    origin = filters.ChoiceFilter(choices=RunOrigin.choices, empty_label="any")

    class Meta(SimulationRunFilterSet.Meta):
        fields = [*SimulationRunFilterSet.Meta.fields, "origin"]


class SweepFilterSet(HxFilterSet):
    id = filters.NumberFilter(min_value=1)
    name = filters.CharFilter(lookup_expr="icontains", max_length=128)
    preset = filters.CharFilter(max_length=32)
    user = filters.CharFilter(field_name="user__username", max_length=150)

    class Meta:
        model = Sweep
        fields = ["id", "name", "preset", "user"]
