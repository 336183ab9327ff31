"""Jobs, allocation previews, policy comparison and partition properties (API)."""

from __future__ import annotations

import math

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.views import APIView

from allocation.filtersets import JobFilterSet
from allocation.models import Job, JobStatus, Machine
from allocation.patterns import PatternChoiceField
from allocation.services import jobs
from hxportal import hostlists
from hxportal.api.fields import NameRelatedField
from hxportal.api.mixins import OwnWritesMixin, validated
from hxportal.roles import Role
from hxportal.validators import no_control_characters

POLICY_CHOICES = jobs.ONLINE_POLICIES
MAX_NODES = 1_048_576


def positive_time(value: float | None, *, allow_zero: bool = False) -> float | None:
    if value is None:
        return None
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise serializers.ValidationError("must be a finite number > 0"
                                          if not allow_zero else "must be finite and >= 0")
    return value


class JobSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="api:job-detail")
    owner = serializers.CharField(source="owner.username", read_only=True)
    machine = serializers.CharField(source="machine.name", read_only=True)
    hostlist = serializers.SerializerMethodField(help_text="Primary nodes (hostlist).")
    spares_hostlist = serializers.SerializerMethodField()
    excluded_hostlist = serializers.SerializerMethodField()

    class Meta:
        model = Job
        fields = ["id", "url", "name", "external_id", "owner", "machine", "node_count",
                  "pattern", "t_cmpt", "t_comm", "wall_time", "status", "policy", "seed",
                  "properties", "hostlist", "spares_hostlist", "excluded_hostlist",
                  "actual_runtime", "created_at", "allocated_at", "finished_at"]
        read_only_fields = fields

    def _lists(self, job: Job) -> dict[str, str]:
        cache = self.context.setdefault("_hostlists", {})
        if job.pk not in cache:
            cache[job.pk] = jobs.job_hostlists(job)
        return cache[job.pk]

    def get_hostlist(self, job: Job) -> str:
        return self._lists(job)["primary"]

    def get_spares_hostlist(self, job: Job) -> str:
        return self._lists(job)["spare"]

    def get_excluded_hostlist(self, job: Job) -> str:
        return self._lists(job)["excluded"]


class JobCreateSerializer(serializers.Serializer):
    machine = NameRelatedField(slug_field="name", queryset=Machine.objects.all())
    name = serializers.CharField(max_length=128, validators=[no_control_characters])
    external_id = serializers.CharField(max_length=64, required=False, allow_blank=True,
                                        default="")
    node_count = serializers.IntegerField(min_value=1, max_value=MAX_NODES)
    pattern = PatternChoiceField()
    t_cmpt = serializers.FloatField(required=False, allow_null=True, default=None)
    t_comm = serializers.FloatField(required=False, allow_null=True, default=None)
    wall_time = serializers.FloatField(required=False, allow_null=True, default=None)
    policy = serializers.ChoiceField(choices=POLICY_CHOICES, required=False,
                                     help_text="Allocate at once with this policy.")
    seed = serializers.IntegerField(min_value=0, max_value=jobs.MAX_SEED, required=False,
                                    default=0)
    spares = serializers.IntegerField(min_value=0, max_value=MAX_NODES, required=False,
                                      default=0)

    def validate_t_cmpt(self, value):
        return positive_time(value)

    def validate_t_comm(self, value):
        return positive_time(value, allow_zero=True)

    def validate_wall_time(self, value):
        return positive_time(value)


class AllocateSerializer(serializers.Serializer):
    policy = serializers.ChoiceField(choices=POLICY_CHOICES)
    seed = serializers.IntegerField(min_value=0, max_value=jobs.MAX_SEED, default=0)
    spares = serializers.IntegerField(min_value=0, max_value=MAX_NODES, default=0)
    mode = serializers.ChoiceField(choices=["online", "formula"], default="online",
                                   help_text="online: among free healthy nodes; formula: the "
                                             "static partition (2D n x n, c = n, k*n^2 nodes)")
    index = serializers.IntegerField(min_value=0, max_value=4096, default=0,
                                     help_text="formula partition index (mode formula)")


class ReleaseSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=sorted(JobStatus.terminal()),
                                     default=JobStatus.COMPLETED)
    actual_runtime = serializers.FloatField(required=False, allow_null=True, default=None)

    def validate_actual_runtime(self, value):
        return positive_time(value)


class PreviewSerializer(AllocateSerializer):
    size = serializers.IntegerField(min_value=1, max_value=MAX_NODES)
    spares = None


class CompareSerializer(serializers.Serializer):
    size = serializers.IntegerField(min_value=1, max_value=MAX_NODES)
    seed = serializers.IntegerField(min_value=0, max_value=jobs.MAX_SEED, default=0)


class PropertiesSerializer(serializers.Serializer):
    machine = NameRelatedField(slug_field="name", queryset=Machine.objects.all())
    hostlist = serializers.CharField(max_length=hostlists.MAX_HOSTLIST_CHARS)
    exact = serializers.BooleanField(required=False, allow_null=True, default=None,
                                     help_text="Exact PB (LP); default: when cheap.")


class PartitionPropertiesSerializer(serializers.Serializer):
    size = serializers.IntegerField()
    switches = serializers.IntegerField()
    avg_distance = serializers.FloatField()
    max_distance = serializers.IntegerField()
    convexity = serializers.CharField()
    switch_locality = serializers.BooleanField()
    hull_links = serializers.IntegerField()
    pb_bound = serializers.FloatField(allow_null=True)
    pb_exact = serializers.FloatField(allow_null=True)


class CandidateSerializer(serializers.Serializer):
    policy = serializers.CharField()
    seed = serializers.IntegerField()
    size = serializers.IntegerField()
    hostlist = serializers.CharField(allow_blank=True)
    properties = PartitionPropertiesSerializer(allow_null=True)
    error = serializers.CharField(allow_null=True)


class ComparisonSerializer(serializers.Serializer):
    machine = serializers.CharField()
    size = serializers.IntegerField()
    candidates = CandidateSerializer(many=True)


class HostlistPropertiesSerializer(PartitionPropertiesSerializer):
    machine = serializers.CharField()
    hostlist = serializers.CharField()


class JobViewSet(OwnWritesMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin,
                 mixins.CreateModelMixin, viewsets.GenericViewSet):
    """Jobs: viewers read; operators create, allocate, start and release their own
    jobs (admins any job)."""

    queryset = Job.objects.select_related("owner", "machine").order_by("-created_at", "-id")
    serializer_class = JobSerializer
    filterset_class = JobFilterSet
    read_role = Role.VIEWER
    write_role = Role.OPERATOR
    owner_field = "owner"

    @extend_schema(request=JobCreateSerializer, responses={201: JobSerializer})
    def create(self, request, *args, **kwargs):
        data = validated(JobCreateSerializer, request)
        job = jobs.submit_job(owner=request.user, **data)
        return Response(JobSerializer(job, context=self.get_serializer_context()).data,
                        status=status.HTTP_201_CREATED)

    @extend_schema(request=AllocateSerializer, responses=JobSerializer)
    @action(detail=True, methods=["post"], filterset_class=None)
    def allocate(self, request, pk=None):
        """Allocate a pending job with a named policy (all nodes or none)."""
        job = self.get_object()  # another operator's job is a 404 before any validation
        data = validated(AllocateSerializer, request)
        job = jobs.allocate_job(job, data["policy"], data["seed"], data["spares"],
                                data["mode"], data["index"])
        return Response(JobSerializer(job, context=self.get_serializer_context()).data)

    @extend_schema(request=None, responses=JobSerializer)
    @action(detail=True, methods=["post"], filterset_class=None)
    def start(self, request, pk=None):
        job = jobs.start_job(self.get_object())
        return Response(JobSerializer(job, context=self.get_serializer_context()).data)

    @extend_schema(request=ReleaseSerializer, responses=JobSerializer)
    @action(detail=True, methods=["post"], filterset_class=None)
    def release(self, request, pk=None):
        """Complete, fail or cancel the job and free its nodes."""
        job = self.get_object()
        data = validated(ReleaseSerializer, request)
        job = jobs.finish_job(job, data["status"], data["actual_runtime"])
        return Response(JobSerializer(job, context=self.get_serializer_context()).data)


class PartitionPropertiesView(APIView):
    """Partition properties of any hostlist of one machine."""

    read_role = Role.VIEWER
    write_role = Role.VIEWER

    @extend_schema(request=PropertiesSerializer, responses=HostlistPropertiesSerializer)
    def post(self, request):
        data = validated(PropertiesSerializer, request)
        result = jobs.hostlist_properties(data["machine"], data["hostlist"], data["exact"])
        return Response(HostlistPropertiesSerializer(result).data)
