"""Node-health API: benchmark uploads, estimates, estimation runs, spares, select-fastest.

Thin views: declare roles, parse, call :mod:`health.services`, shape the answer.

* ``POST /api/v1/benchmarks/`` (operator, or a benchmark-scoped token): JSON
  ``{"job", "benchmark", "results": [{"node", "seconds"[, "measured_at"]}]
  [, "measured_at"]}``, or CSV (``text/csv`` body, or multipart field ``file``)
  with header ``job,benchmark,node,seconds[,measured_at]``. 201 with
  ``{"stored", "replaced", "groups"}``. Re-posting a job's benchmark replaces it.
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

import json
import math

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Q
from django_filters import rest_framework as filters
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.exceptions import ParseError, PermissionDenied
from rest_framework.parsers import BaseParser, FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from allocation.models import Machine
from health import services as health
from health.constants import DEFAULT_WINDOW_DAYS, MAX_WINDOW_DAYS
from health.models import BENCHMARK_NAME_VALIDATOR, BenchmarkResult, Estimate, EstimationRun
from hxportal import hostlists, ownership
from hxportal.api.fields import NameRelatedField
from hxportal.api.filters import BoundedIsoDateTimeFilter, HostlistFilter
from hxportal.api.parsers import json_depth_exceeds
from hxportal.models import ApiToken, TokenScope
from hxportal.roles import Role, role_at_least

# --------------------------------------------------------------------------
# Parsers


class BenchmarkJSONParser(BaseParser):
    """JSON that lets NaN / Infinity through, so the service names the row that holds them."""

    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None):
        raw = stream.read() if stream is not None else b""
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError("Request body is not valid UTF-8.") from exc
        if json_depth_exceeds(text, settings.HX_MAX_JSON_DEPTH):
            raise ParseError(f"JSON nested deeper than {settings.HX_MAX_JSON_DEPTH} levels.")
        try:
            return json.loads(text, parse_constant=float)
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from exc


class CSVTextParser(BaseParser):
    """``text/csv`` bodies arrive as one string."""

    media_type = "text/csv"

    def parse(self, stream, media_type=None, parser_context=None):
        raw = stream.read() if stream is not None else b""
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError("CSV body is not valid UTF-8.") from exc


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


class BenchmarkResultFilterSet(filters.FilterSet):
    machine = filters.CharFilter(field_name="machine__name", max_length=64)
    job = filters.CharFilter(method="filter_job", max_length=64,
                             help_text="Portal id or external id.")
    benchmark = filters.CharFilter(max_length=64)
    hostlist = HostlistFilter(field_name="node__hostname", max_length=100_000)
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


class BenchmarkResultSerializer(serializers.ModelSerializer):
    machine = serializers.CharField(source="machine.name", read_only=True)
    node = serializers.CharField(source="node.hostname", read_only=True)
    job_external_id = serializers.CharField(source="job.external_id", read_only=True)

    class Meta:
        model = BenchmarkResult
        fields = ["id", "machine", "job", "job_external_id", "node", "benchmark", "seconds",
                  "measured_at", "created_at"]
        read_only_fields = fields
        extra_kwargs = {"job": {"allow_null": True, "help_text": (
            "null for another user's job when HX_PRIVATE_DATA is on")}}

    def to_representation(self, instance):
        data = super().to_representation(instance)
        user = getattr(self.context.get("request"), "user", None)
        if user is not None and not ownership.reads_everything(user) \
                and instance.job.owner_id != user.pk:
            data.update(job=None, job_external_id="")  # node data stays; the job is private
        return data


class BenchmarkTimeSerializer(serializers.Serializer):
    node = serializers.CharField(max_length=63)
    seconds = serializers.FloatField(help_text="Seconds, > 0.")
    measured_at = serializers.DateTimeField(required=False)


class BenchmarkUploadSerializer(serializers.Serializer):
    """The JSON upload (documentation; the service validates, naming rows)."""

    job = serializers.CharField(max_length=64, help_text="Portal id or external id.")
    benchmark = serializers.CharField(max_length=64)
    measured_at = serializers.DateTimeField(required=False)
    results = BenchmarkTimeSerializer(many=True)


class IngestGroupSerializer(serializers.Serializer):
    job = serializers.IntegerField()
    external_id = serializers.CharField()
    machine = serializers.CharField()
    benchmark = serializers.CharField()
    count = serializers.IntegerField()
    nodes = serializers.CharField(help_text="Hostlist of the nodes stored.")


class IngestResultSerializer(serializers.Serializer):
    stored = serializers.IntegerField()
    replaced = serializers.IntegerField(help_text="Rows of the same jobs/benchmarks replaced.")
    groups = IngestGroupSerializer(many=True)


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
        """Upload benchmark times (JSON, CSV body or CSV file); replaces a re-posted job."""
        media = (request.content_type or "").split(";")[0].strip().lower()
        owner = _job_owner_required(request)
        if media == "text/csv":
            # DRF hands an empty body over as an empty dict, not as "".
            result = health.ingest_csv(request.data if isinstance(request.data, str) else "",
                                       owner=owner)
        elif media in ("multipart/form-data", "application/x-www-form-urlencoded"):
            upload = request.FILES.get("file")
            if upload is None:
                raise DjangoValidationError({"file": ["a CSV file is required"]})
            if upload.size > settings.HX_MAX_BODY_BYTES:
                raise DjangoValidationError({"file": ["larger than the upload limit"]})
            try:
                text = upload.read().decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DjangoValidationError({"file": ["not UTF-8 text"]}) from exc
            result = health.ingest_csv(text, owner=owner)
        else:
            result = health.ingest_payload(request.data, owner=owner)
        return Response(IngestResultSerializer(result.as_dict()).data,
                        status=status.HTTP_201_CREATED)


# --------------------------------------------------------------------------
# Estimates and estimation runs


class EstimateFilterSet(filters.FilterSet):
    machine = filters.CharFilter(field_name="machine__name", max_length=64)
    benchmark = filters.CharFilter(max_length=64)

    class Meta:
        model = Estimate
        fields = ["machine", "benchmark"]


class EstimateSerializer(serializers.ModelSerializer):
    machine = serializers.CharField(source="machine.name", read_only=True)
    alpha_abn = serializers.FloatField(allow_null=True, read_only=True)
    run = serializers.IntegerField(source="run_id", allow_null=True, read_only=True)
    rule = serializers.JSONField(read_only=True)

    class Meta:
        model = Estimate
        fields = ["id", "machine", "benchmark", "window_start", "window_end", "runs",
                  "abnormal_runs", "jobs", "nodes", "t_bench", "alpha_abn", "p_abn",
                  "p_abn_low", "p_abn_high", "confidence", "rule", "created_at", "run"]
        read_only_fields = fields


class EstimateViewSet(viewsets.ReadOnlyModelViewSet):
    """Stored estimates of p_abn, alpha_abn and t_bench, newest first."""

    queryset = Estimate.objects.select_related("machine").order_by("-created_at", "-id")
    serializer_class = EstimateSerializer
    filterset_class = EstimateFilterSet
    read_role = Role.VIEWER


class EstimationRunSerializer(serializers.ModelSerializer):
    machine = NameRelatedField(slug_field="name", queryset=Machine.objects.all())
    benchmark = serializers.CharField(max_length=64, required=False, allow_blank=True,
                                      default="", validators=[BENCHMARK_NAME_VALIDATOR])
    window_days = serializers.IntegerField(min_value=1, max_value=MAX_WINDOW_DAYS,
                                           default=DEFAULT_WINDOW_DAYS)
    user = serializers.CharField(source="user.username", read_only=True, allow_null=True)
    log = serializers.ListField(child=serializers.CharField(), read_only=True)
    result = serializers.JSONField(read_only=True, allow_null=True)
    duration_seconds = serializers.FloatField(read_only=True, allow_null=True)

    class Meta:
        model = EstimationRun
        fields = ["id", "machine", "benchmark", "window_days", "status", "progress", "log",
                  "result", "error", "user", "created_at", "started_at", "finished_at",
                  "duration_seconds"]
        read_only_fields = ["status", "progress", "error", "created_at", "started_at",
                            "finished_at"]


class EstimationRunFilterSet(filters.FilterSet):
    machine = filters.CharFilter(field_name="machine__name", max_length=64)

    class Meta:
        model = EstimationRun
        fields = ["machine", "status"]


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


class SparesRequestSerializer(serializers.Serializer):
    n_node = serializers.IntegerField(min_value=1, max_value=health.MAX_N_NODE)
    t_cmpt = serializers.FloatField(min_value=0, required=False,
                                    help_text="Compute time slowed by abnormal nodes (s).")
    t_comm = serializers.FloatField(min_value=0, required=False,
                                    help_text="Time not slowed (s); default 0.")
    wall_time = serializers.FloatField(min_value=0, required=False,
                                       help_text="Instead of t_cmpt/t_comm.")
    compute_fraction = serializers.FloatField(required=False,
                                              help_text="t_cmpt = fraction x wall_time.")
    machine = NameRelatedField(slug_field="name", queryset=Machine.objects.all(),
                                           required=False)
    benchmark = serializers.CharField(max_length=64, required=False, allow_blank=True)
    p_abn = serializers.FloatField(required=False)
    alpha_abn = serializers.FloatField(required=False)
    t_bench = serializers.FloatField(required=False)
    per_node = serializers.BooleanField(default=False, help_text=(
        "Give each free node of the machine its own p_abn from its history and "
        "name the nodes to allocate (chosen)."))
    max_curve_points = serializers.IntegerField(min_value=3, max_value=100_000,
                                                default=health.MAX_CURVE_POINTS)

    def validate(self, attrs):
        for name, value in attrs.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise serializers.ValidationError({name: ["must be finite"]})
        return attrs


class CurvePointSerializer(serializers.Serializer):
    n_spare = serializers.IntegerField()
    expected_cost = serializers.FloatField()
    expected_time = serializers.FloatField()


class SpareEstimateRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    machine = serializers.CharField()
    benchmark = serializers.CharField()
    created_at = serializers.DateTimeField()
    runs = serializers.IntegerField()
    window_start = serializers.DateTimeField()
    window_end = serializers.DateTimeField()


class SpareRecommendationSerializer(serializers.Serializer):
    n_node = serializers.IntegerField()
    n_spare = serializers.IntegerField()
    n_total = serializers.IntegerField()
    expected_cost = serializers.FloatField(help_text="E[C] at the optimum (node-seconds).")
    expected_time = serializers.FloatField(help_text="E[T_total] at the optimum (s).")
    as_is_cost = serializers.FloatField()
    as_is_time = serializers.FloatField()
    saving_ratio = serializers.FloatField(help_text="as_is_cost / expected_cost.")
    p_abn = serializers.FloatField()
    alpha_abn = serializers.FloatField()
    t_bench = serializers.FloatField()
    t_cmpt = serializers.FloatField()
    t_comm = serializers.FloatField()
    curve = CurvePointSerializer(many=True)
    per_node = serializers.BooleanField()
    chosen = serializers.CharField(allow_null=True,
                                   help_text="per_node: hostlist of the nodes to allocate.")
    curve_points = serializers.IntegerField()
    curve_downsampled = serializers.BooleanField()
    curve_note = serializers.CharField()
    parameters_source = serializers.CharField()
    estimate = SpareEstimateRefSerializer(allow_null=True)


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


class SelectFastestRequestSerializer(serializers.Serializer):
    job = serializers.CharField(max_length=64, required=False,
                                help_text="Use the job's stored results (id or external id).")
    benchmark = serializers.CharField(max_length=64, required=False, allow_blank=True,
                                      default="")
    times = serializers.DictField(child=serializers.JSONField(), required=False,
                                  help_text="Or give {node: seconds} directly.")
    n_node = serializers.IntegerField(min_value=1, max_value=health.MAX_N_NODE,
                                      required=False,
                                      help_text="Nodes to keep; default the job's node count.")
    abnormal_threshold = serializers.FloatField(min_value=1, required=False, allow_null=True)
    record_roles = serializers.BooleanField(default=False, help_text=(
        "Operators: mark the job's allocations primary (kept) / excluded (dropped)."))


class SelectFastestResultSerializer(serializers.Serializer):
    job = serializers.IntegerField(allow_null=True)
    benchmark = serializers.CharField(allow_null=True)
    n_node = serializers.IntegerField()
    n_spare = serializers.IntegerField()
    keep = serializers.CharField(help_text="Hostlist of the n_node fastest nodes.")
    dropped = serializers.CharField()
    abnormal = serializers.CharField(help_text="Dropped nodes that look abnormal.")
    abnormal_kept = serializers.CharField(help_text="Kept nodes that look abnormal.")
    median = serializers.FloatField()
    ratio_threshold = serializers.FloatField()
    rule = serializers.CharField()
    roles = serializers.DictField(child=serializers.IntegerField(), allow_null=True)


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
        result["roles"] = (health.record_selection(job, result["keep"], result["dropped"])
                           if data["record_roles"] else None)
        return Response(result)


# --------------------------------------------------------------------------
# Node health


class NodeSuspicionSerializer(serializers.Serializer):
    node = serializers.CharField()
    runs = serializers.IntegerField()
    abnormal_runs = serializers.IntegerField()
    abnormal_fraction = serializers.FloatField()
    mean_slowdown = serializers.FloatField(allow_null=True)
    p_posterior = serializers.FloatField()
    p_interval = serializers.ListField(child=serializers.FloatField())
    score = serializers.FloatField()
    drain_candidate = serializers.BooleanField()
    evidence = serializers.ListField(child=serializers.CharField(),
                                     help_text="Jobs of the latest abnormal runs.")


class NodeHealthSerializer(serializers.Serializer):
    machine = serializers.CharField()
    benchmark = serializers.CharField()
    benchmarks = serializers.ListField(child=serializers.CharField())
    window_days = serializers.IntegerField()
    runs = serializers.IntegerField()
    ratio_threshold = serializers.FloatField(allow_null=True)
    drain_candidates = serializers.CharField(help_text="Hostlist of the drain candidates.")
    nodes = NodeSuspicionSerializer(many=True)


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
