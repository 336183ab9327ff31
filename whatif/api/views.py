"""Thin API views of what-if studies: roles, serializers; the services do the work."""

from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response

from hxportal.api.mixins import OwnWritesMixin, validated
from hxportal.api.parsers import SafeJSONParser
from hxportal.roles import Role
from whatif import services
from whatif.api.serializers import (
    DemoSerializer,
    ProgressSerializer,
    ResultsSerializer,
    StudyCreateSerializer,
    StudySerializer,
)
from whatif.models import WhatIfStudy


class WhatIfStudyViewSet(OwnWritesMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin,
                         mixins.CreateModelMixin, mixins.DestroyModelMixin,
                         viewsets.GenericViewSet):
    """What-if studies: viewers read progress and results; operators start (202, with
    an uploaded log or a synthetic month), cancel and delete their own."""

    queryset = services.with_counts(WhatIfStudy.objects.select_related("machine", "user")
                                    .defer("workload")).order_by("-created_at", "-id")
    serializer_class = StudySerializer
    read_role = Role.VIEWER
    write_role = Role.OPERATOR
    parser_classes = [SafeJSONParser, MultiPartParser, FormParser]
    http_method_names = ["get", "post", "delete", "head", "options"]
    filterset_class = None
    extra_query_params = ("jobs",)

    @extend_schema(request={"multipart/form-data": StudyCreateSerializer,
                            "application/json": StudyCreateSerializer},
                   responses={202: StudySerializer})
    def create(self, request, *args, **kwargs):
        data = validated(StudyCreateSerializer, request)
        study = services.start_study(
            machine=data["machine"], fmt=data["format"], upload=data.get("workload"),
            policies=data["policies"], spares=data["spares"], seeds=data["seeds"],
            ideal=data["ideal"], release=data["release"], name=data["name"],
            user=request.user, days=data["days"], load=data["load"])
        return self._created(study)

    def _created(self, study: WhatIfStudy) -> Response:
        study = services.with_counts(WhatIfStudy.objects.select_related("machine", "user")
                                     .defer("workload")).get(pk=study.pk)
        body = StudySerializer(study, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=DemoSerializer, responses={202: StudySerializer})
    @action(detail=False, methods=["post"])
    def demo(self, request):
        """One click: every policy x none / 2 / recommended spares, 3 seeds, on a
        synthetic month (or the machine's synced history)."""
        data = validated(DemoSerializer, request)
        return self._created(services.start_demo(machine=data["machine"], user=request.user,
                                                 fmt=data["format"]))

    @extend_schema(request=None, responses=ProgressSerializer)
    @action(detail=True, methods=["get"])
    def progress(self, request, pk=None):
        return Response(services.progress(self.get_object()))

    @extend_schema(request=None, responses=ResultsSerializer, parameters=[OpenApiParameter(
        "jobs", bool, description="Include each scenario's job list (default true).")])
    @action(detail=True, methods=["get"])
    def results(self, request, pk=None):
        """The results so far, in the command's JSON shape."""
        with_jobs = request.query_params.get("jobs", "true").lower() not in ("0", "false")
        return Response(services.results(self.get_object(), with_jobs=with_jobs))

    @extend_schema(request=None, responses={(200, "text/csv"): str})
    @action(detail=True, methods=["get"], url_path="csv")
    def export_csv(self, request, pk=None):
        """One row per scenario: summary means with interval bounds."""
        study = self.get_object()
        response = HttpResponse(services.export_csv(study), content_type="text/csv")
        response["Content-Disposition"] = f'attachment; filename="whatif-{study.pk}.csv"'
        return response

    def perform_destroy(self, instance):
        services.delete_study(instance)

    @extend_schema(request=None, responses=ProgressSerializer)
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        study = self.get_object()
        services.cancel_study(study)
        return Response(services.progress(study))
