"""Per-job recommendations: ask (operators), read (viewers), accept (the asker or admins)."""

from __future__ import annotations

from django.core.cache import cache
from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from allocation.api.serializers.jobs import JobSerializer
from hxportal.api.mixins import OwnWritesMixin, validated
from hxportal.roles import Role
from recommendations import constants as recommendation_constants
from recommendations import services as recommendations
from recommendations.api.serializers import (
    AcceptSerializer,
    CalibrationSerializer,
    CalibrationStartSerializer,
    RecommendationRequestSerializer,
    RecommendationSerializer,
)
from recommendations.filtersets import CalibrationFilterSet, RecommendationFilterSet
from recommendations.models import Calibration, Recommendation


def cached_answer(rec: Recommendation, request, context: dict) -> HttpResponse:
    """A repeated question answered by a ready recommendation, rendered once per
    process: its body changes only with its status (accept), its predictions'
    progress and the host in its URL, which make the key. This skips the
    serializer and the JSON encoder for the 50-70 KB ranking on every repeat."""
    progress = recommendations.prediction_progress(rec)
    key = (f"hx:rec-answer:{rec.pk}:{rec.status}:{rec.finished_at.isoformat()}:"
           f"{progress['done']}/{progress['simulations']}:{request.get_host()}")
    body = cache.get(key)
    if body is None:
        data = RecommendationSerializer(rec, context={**context, "progress": progress}).data
        body = JSONRenderer().render(data)
        cache.set(key, body, timeout=recommendation_constants.CACHE_SECONDS)
    return HttpResponse(body, content_type="application/json", status=status.HTTP_200_OK)


class RecommendationViewSet(OwnWritesMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin,
                            viewsets.GenericViewSet):
    """Operators ask for a recommendation (202 while simulations run, 200 when cached)
    and accept their own; viewers read every recommendation."""

    queryset = Recommendation.objects.select_related("machine", "user", "calibration").order_by(
        "-created_at", "-id")
    serializer_class = RecommendationSerializer
    filterset_class = RecommendationFilterSet
    read_role = Role.VIEWER
    write_role = Role.OPERATOR

    def get_object(self):
        return recommendations.refresh(super().get_object())

    @extend_schema(request=RecommendationRequestSerializer,
                   responses={200: RecommendationSerializer, 202: RecommendationSerializer})
    def create(self, request, *args, **kwargs):
        data = validated(RecommendationRequestSerializer, request)
        rec, cached = recommendations.request_recommendation(user=request.user, **data)
        context = {**self.get_serializer_context(), "cached": cached}
        if cached and rec.status == "ready" and request.accepted_renderer.format == "json":
            return cached_answer(rec, request, context)
        code = status.HTTP_202_ACCEPTED if rec.status == "computing" else status.HTTP_200_OK
        return Response(RecommendationSerializer(rec, context=context).data, status=code)

    @extend_schema(request=AcceptSerializer, responses={201: JobSerializer})
    @action(detail=True, methods=["post"], filterset_class=None)
    def accept(self, request, pk=None):
        """Allocate the recommended policy with N_node + N_spare nodes (once)."""
        rec = self.get_object()  # another operator's recommendation is a 404 first
        data = validated(AcceptSerializer, request)
        job = recommendations.accept(rec, request.user, data.get("policy"))
        return Response(JobSerializer(job, context=self.get_serializer_context()).data,
                        status=status.HTTP_201_CREATED)


class CalibrationViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin,
                         viewsets.GenericViewSet):
    """Calibrations of machine shapes: viewers read them (progress, grid, age);
    operators start one (the running one of the shape is answered if there is one)
    and cancel one (what finished stays in its table)."""

    queryset = Calibration.objects.select_related("machine", "sweep").order_by(
        "-created_at", "-id")
    serializer_class = CalibrationSerializer
    filterset_class = CalibrationFilterSet
    read_role = Role.VIEWER
    write_role = Role.OPERATOR

    def get_object(self):
        return recommendations.refresh_calibration(super().get_object())

    @extend_schema(request=CalibrationStartSerializer,
                   responses={201: CalibrationSerializer, 200: CalibrationSerializer})
    def create(self, request, *args, **kwargs):
        data = validated(CalibrationStartSerializer, request)
        machine = data.pop("machine")
        calibration, created = recommendations.start_calibration(machine, user=request.user,
                                                                 axes=data)
        return Response(CalibrationSerializer(calibration,
                                              context=self.get_serializer_context()).data,
                        status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    @extend_schema(request=None, responses=CalibrationSerializer)
    @action(detail=True, methods=["post"], filterset_class=None)
    def cancel(self, request, pk=None):
        """Cancel the runs not finished; the table keeps what finished."""
        calibration = recommendations.cancel_calibration(self.get_object())
        return Response(CalibrationSerializer(calibration,
                                              context=self.get_serializer_context()).data)
