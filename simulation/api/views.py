"""Thin API views: declare roles, serializers and filters; services do the writing."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from hxportal.api.mixins import OwnWritesMixin, validated
from hxportal.roles import Role
from simulation import services
from simulation.api.serializers import (
    RunCreateSerializer,
    SimulationRunDetailSerializer,
    SimulationRunSerializer,
    StudySerializer,
    SweepCreateSerializer,
    SweepDetailSerializer,
    SweepResultRowSerializer,
    SweepSerializer,
    ValidationResultSerializer,
)
from simulation.filtersets import SimulationRunFilterSet, SweepFilterSet
from simulation.models import RunOrigin, SimulationRun, Sweep


def _invalid(errors) -> Response:
    errors = {k: [str(m) for m in (v if isinstance(v, list) else [v])]
              for k, v in dict(errors).items()}
    detail = " | ".join(f"{k}: {'; '.join(v)}" for k, v in errors.items())
    return Response({"valid": False, "detail": detail, "errors": errors})


class SimulationRunViewSet(OwnWritesMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin,
                           mixins.CreateModelMixin, mixins.DestroyModelMixin,
                           viewsets.GenericViewSet):
    """Simulation runs: viewers read; operators start (202), cancel and delete their own."""

    queryset = SimulationRun.objects.select_related("user", "machine").order_by(
        "-created_at", "-id")
    filterset_class = SimulationRunFilterSet
    read_role = Role.VIEWER
    write_role = Role.OPERATOR
    http_method_names = ["get", "post", "delete", "head", "options"]

    def get_queryset(self):
        queryset = super().get_queryset()
        if self.action == "list":  # runs others submitted; predictions stay out of lists
            queryset = queryset.filter(origin=RunOrigin.SUBMITTED).defer(
                "result", "log", "parameters")
        return queryset

    def get_serializer_class(self):
        if self.action == "list":
            return SimulationRunSerializer
        return SimulationRunDetailSerializer

    @extend_schema(request=RunCreateSerializer, responses={202: SimulationRunDetailSerializer})
    def create(self, request, *args, **kwargs):
        data = validated(RunCreateSerializer, request)
        run = services.start_run(data["config"], user=request.user,
                                 machine=data.get("machine"))
        body = SimulationRunDetailSerializer(run, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=RunCreateSerializer, responses=ValidationResultSerializer)
    @action(detail=False, methods=["post"], filterset_class=None)
    def validate(self, request):
        """Check a configuration without starting anything (the form's live validation).

        Always 200: ``{"valid": true, "config", ...}`` or ``{"valid": false, "detail",
        "errors": {field: [...]}}`` (the same errors a create would answer with 400).
        """
        serializer = RunCreateSerializer(data=request.data)
        if not serializer.is_valid():
            return _invalid(serializer.errors)
        data = serializer.validated_data
        try:
            return Response(services.check_config(data["config"], data.get("machine")))
        except DjangoValidationError as exc:
            return _invalid(exc.message_dict)

    @extend_schema(request=None, responses=SimulationRunDetailSerializer)
    @action(detail=True, methods=["post"], filterset_class=None)
    def cancel(self, request, pk=None):
        run = services.cancel_run(self.get_object())
        return Response(SimulationRunDetailSerializer(
            run, context=self.get_serializer_context()).data)

    def perform_destroy(self, instance):
        services.delete_run(instance)


class SweepViewSet(OwnWritesMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin,
                   mixins.CreateModelMixin, mixins.DestroyModelMixin, viewsets.GenericViewSet):
    """Sweeps: viewers read progress and partial results; operators start (202), start
    the reference study, cancel and delete their own."""

    queryset = services.with_counts(Sweep.objects.select_related("user")).order_by(
        "-created_at", "-id")
    filterset_class = SweepFilterSet
    read_role = Role.VIEWER
    write_role = Role.OPERATOR
    http_method_names = ["get", "post", "delete", "head", "options"]

    def get_serializer_class(self):
        if self.action == "retrieve":
            return SweepDetailSerializer
        return SweepSerializer

    def _created(self, sweep: Sweep) -> Response:
        body = SweepSerializer(sweep, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=SweepCreateSerializer, responses={202: SweepSerializer})
    def create(self, request, *args, **kwargs):
        data = validated(SweepCreateSerializer, request)
        sweep = services.create_sweep(name=data["name"], base=data["base"],
                                      parameters=data["parameters"], user=request.user)
        return self._created(sweep)

    @extend_schema(request=StudySerializer, responses={202: SweepSerializer})
    @action(detail=False, methods=["post"], filterset_class=None)
    def study(self, request):
        """Launch the reference study (simulation.presets.study_configs) as one sweep."""
        data = validated(StudySerializer, request)
        sweep = services.start_study(user=request.user, scale=data["scale"],
                                     name=data["name"])
        return self._created(sweep)

    @extend_schema(request=None, responses=SweepResultRowSerializer(many=True))
    @action(detail=True, methods=["get"], filterset_class=None)
    def results(self, request, pk=None):
        """The flat results table so far (one row per run)."""
        return Response(services.sweep_rows(self.get_object()))

    @extend_schema(request=None, responses=SweepSerializer)
    @action(detail=True, methods=["post"], filterset_class=None)
    def cancel(self, request, pk=None):
        """Cancel every run of the sweep that has not finished."""
        sweep = self.get_object()
        services.cancel_sweep(sweep)
        sweep = self.get_queryset().get(pk=sweep.pk)
        return Response(SweepSerializer(sweep, context=self.get_serializer_context()).data)

    def perform_destroy(self, instance):
        services.delete_sweep(instance)
