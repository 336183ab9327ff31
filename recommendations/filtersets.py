"""Filters of the recommendation list, shared by the page and the API."""

from __future__ import annotations

from django_filters import rest_framework as filters

from hxportal.api.filters import HxFilterSet
from recommendations.models import (
    Calibration,
    CalibrationStatus,
    Recommendation,
    RecommendationStatus,
)


class RecommendationFilterSet(HxFilterSet):
    machine = filters.CharFilter(field_name="machine__name", max_length=64)
    status = filters.MultipleChoiceFilter(choices=RecommendationStatus.choices)
    external_id = filters.CharFilter(max_length=64)

    class Meta:
        model = Recommendation
        fields = ["machine", "status", "external_id"]


class CalibrationFilterSet(HxFilterSet):
    machine = filters.CharFilter(field_name="machine__name", max_length=64)
    status = filters.MultipleChoiceFilter(choices=CalibrationStatus.choices)
    engine_version = filters.CharFilter(max_length=16)
    occupancy_model = filters.CharFilter(max_length=16)

    class Meta:
        model = Calibration
        fields = ["machine", "status", "engine_version", "occupancy_model"]
