"""Node-health API: benchmark uploads, estimates, estimation runs, spares, select-fastest.

Thin views: declare roles, parse, call :mod:`health.services`, shape the answer.

* ``POST /api/v1/benchmarks/`` (operator, or a benchmark-scoped token): JSON
  ``{"job", "benchmark", "results": [{"node", "seconds"[, "measured_at"]}]
  [, "measured_at"]}``, or CSV (``text/csv`` body, or multipart field ``file``)
  with header ``job,benchmark,node,seconds[,measured_at]``. 201 with
  ``{"stored", "replaced", "groups"}``. Re-posting a job's benchmark replaces it.
  ``machine`` in place of ``job`` (CSV: the first column) is a health round: a
  fleet-wide benchmark outside any job.
* ``GET /api/v1/benchmarks/`` (viewer): filters machine, job, benchmark, hostlist.
* ``GET /api/v1/estimates/`` (viewer): filters machine, benchmark.
* ``GET|POST /api/v1/estimation-runs/``: operators start a run (202).
* ``POST /api/v1/spares/`` (viewer: a read-only computation; POST because the
  input is a structured body) -> the recommendation and its curve.
* ``POST /api/v1/select-fastest/`` (viewer, benchmark-scoped tokens too, so the
  job's own script can ask; ``record_roles`` needs an operator).
* ``GET /api/v1/node-health/?machine=`` (viewer): per-node suspicion.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.exceptions import PermissionDenied
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from allocation.models import Machine
from health import services as health
from health.api.parsers import BenchmarkJSONParser, CSVTextParser
from health.api.serializers import (
    BenchmarkResultSerializer,
    BenchmarkUploadSerializer,
    EstimateSerializer,
    EstimationRunSerializer,
    IngestResultSerializer,
    NodeHealthSerializer,
    SelectFastestRequestSerializer,
    SelectFastestResultSerializer,
    SpareRecommendationSerializer,
    SparesRequestSerializer,
)
from health.constants import DEFAULT_WINDOW_DAYS
from health.filtersets import BenchmarkResultFilterSet, EstimateFilterSet, EstimationRunFilterSet
from health.models import BenchmarkResult, Estimate, EstimationRun
from hxportal import hostlists, ownership
from hxportal.models import ApiToken, TokenScope
from hxportal.roles import Role, role_at_least
from hxportal.validators import uploaded_text


def _is_benchmark_token(request) -> bool:
    token = request.auth if isinstance(request.auth, ApiToken) else None
    return token is not None and token.scope == TokenScope.BENCHMARKS


def _job_owner_required(request):
    """Whose jobs the caller may write for: None (any) for admins and for the
    benchmark-scoped tokens an admin issues to the cluster's prolog, which
    uploads for every job; otherwise the caller's own jobs only."""
    if role_at_least(request.user, Role.ADMIN) or _is_benchmark_token(request):
        return None
    return request.user


# --------------------------------------------------------------------------
# Benchmarks


class BenchmarkResultViewSet(mixins.ListModelMixin, mixins.CreateModelMixin,
                             viewsets.GenericViewSet):
    """Benchmark times per node and job: viewers read, operators and scripts upload."""

    queryset = BenchmarkResult.objects.select_related("machine", "node", "job").order_by(
        "-measured_at", "-id")
    serializer_class = BenchmarkResultSerializer
    filterset_class = BenchmarkResultFilterSet
    parser_classes = [BenchmarkJSONParser, CSVTextParser, MultiPartParser, FormParser]
    read_role = Role.VIEWER
    write_role = Role.OPERATOR
    http_method_names = ["get", "post", "head", "options"]

    @property
    def allow_benchmark_scope(self) -> bool:
        return getattr(self, "action", None) == "create"

    @extend_schema(
        request={"application/json": BenchmarkUploadSerializer,
                 "text/csv": OpenApiTypes.STR,
                 "multipart/form-data": inline_serializer(
                     "BenchmarkCSVUpload", {"file": serializers.FileField()})},
        responses={201: IngestResultSerializer})
    def create(self, request, *args, **kwargs):
        """Upload benchmark times (JSON, CSV body or CSV file) of a job's nodes (replacing a
        re-posted job), or of a health round (``machine`` instead of ``job``)."""
        media = (request.content_type or "").split(";")[0].strip().lower()
        owner = _job_owner_required(request)
        if media == "text/csv":
            # DRF hands an empty body over as an empty dict, not as "".
            result = health.ingest_csv(request.data if isinstance(request.data, str) else "",
                                       owner=owner, user=request.user)
        elif media in ("multipart/form-data", "application/x-www-form-urlencoded"):
            upload = request.FILES.get("file")
            if upload is None:
                raise DjangoValidationError({"file": ["a CSV file is required"]})
            result = health.ingest_csv(uploaded_text(upload), owner=owner, user=request.user)
        else:
            result = health.ingest_payload(request.data, owner=owner, user=request.user)
        return Response(IngestResultSerializer(result.as_dict()).data,
                        status=status.HTTP_201_CREATED)


# --------------------------------------------------------------------------
# Estimates and estimation runs


class EstimateViewSet(viewsets.ReadOnlyModelViewSet):
    """Stored estimates of p_abn, alpha_abn and t_bench, newest first."""

    queryset = Estimate.objects.select_related("machine").order_by("-created_at", "-id")
    serializer_class = EstimateSerializer
    filterset_class = EstimateFilterSet
    read_role = Role.VIEWER


class EstimationRunViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin,
                           mixins.CreateModelMixin, viewsets.GenericViewSet):
    """Estimation runs: operators start one (202); it runs on a worker with progress and log."""

    queryset = EstimationRun.objects.select_related("machine", "user").order_by(
        "-created_at", "-id")
    serializer_class = EstimationRunSerializer
    filterset_class = EstimationRunFilterSet
    read_role = Role.VIEWER
    write_role = Role.OPERATOR
    http_method_names = ["get", "post", "head", "options"]

    @extend_schema(responses={202: EstimationRunSerializer})
    def create(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        run = health.start_estimation(data["machine"], window_days=data["window_days"],
                                      benchmark=data.get("benchmark", ""), user=request.user)
        return Response(self.get_serializer(run).data, status=status.HTTP_202_ACCEPTED)


# --------------------------------------------------------------------------
# Spares


class SparesView(APIView):
    """How many spare nodes to add: E[C] against N_spare, the optimum and As-is."""

    read_role = Role.VIEWER
    write_role = Role.VIEWER  # a computation: nothing is written

    @extend_schema(request=SparesRequestSerializer, responses={200: SpareRecommendationSerializer})
    def post(self, request):
        form = SparesRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        return Response(health.recommend(**form.validated_data))


# --------------------------------------------------------------------------
# Select the fastest


class SelectFastestView(APIView):
    """Keep the N_node fastest nodes of a job; the slow rest are dropped."""

    read_role = Role.VIEWER
    write_role = Role.VIEWER
    allow_benchmark_scope = True

    @extend_schema(request=SelectFastestRequestSerializer,
                   responses={200: SelectFastestResultSerializer})
    def post(self, request):
        form = SelectFastestRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        if data["record_roles"] and (
                not role_at_least(request.user, Role.OPERATOR) or _is_benchmark_token(request)):
            raise PermissionDenied("Recording allocation roles needs the operator role.")
        if data["record_roles"] and "job" not in data:
            raise DjangoValidationError({"record_roles": ["needs a job"]})
        job = health.resolve_job(data["job"]) if "job" in data else None
        if data["record_roles"] and not ownership.may_change(request.user, job.owner_id):
            raise DjangoValidationError({"job": [
                f"job {job.pk} is {job.owner.username}'s; only its owner or an admin may "
                "record its allocation roles"]})
        result = health.select_fastest(
            n_node=data.get("n_node"), times=data.get("times"), job=job,
            benchmark=data["benchmark"], abnormal_threshold=data.get("abnormal_threshold"))
        result["roles"] = (health.record_selection(job, result["keep"], result["dropped"],
                                                   allow_fewer=data["allow_fewer"])
                           if data["record_roles"] else None)
        return Response(result)


# --------------------------------------------------------------------------
# Node health


class NodeHealthView(APIView):
    """Per-node suspicion from the benchmark history of one machine, most suspect first."""

    read_role = Role.VIEWER

    @extend_schema(
        parameters=[OpenApiParameter("machine", str, required=True),
                    OpenApiParameter("benchmark", str),
                    OpenApiParameter("window_days", int)],
        responses={200: NodeHealthSerializer})
    def get(self, request):
        params = request.query_params
        unknown = sorted(set(params) - {"machine", "benchmark", "window_days", "format"})
        if unknown:
            raise DjangoValidationError({name: ["unknown query parameter"] for name in unknown})
        machine = Machine.objects.filter(name=params.get("machine", "")).first()
        if machine is None:
            raise DjangoValidationError({"machine": ["no such machine"]})
        try:
            window = int(params.get("window_days", DEFAULT_WINDOW_DAYS))
        except ValueError as exc:
            raise DjangoValidationError({"window_days": ["must be an integer"]}) from exc
        state = health.machine_health(machine, params.get("benchmark", ""), window,
                                      reader=request.user)
        return Response({
            "machine": machine.name, "benchmark": state.benchmark,
            "benchmarks": state.benchmarks, "window_days": state.window_days,
            "runs": state.runs, "ratio_threshold": state.ratio_threshold,
            "drain_candidates": hostlists.compress(s.node for s in state.candidates),
            "nodes": [s.as_dict() for s in state.suspicion]})
