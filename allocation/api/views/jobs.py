"""Jobs and partition properties (API). Shapes in ``allocation.api.serializers.jobs``."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.views import APIView

from allocation.api.serializers.jobs import (
    AllocateSerializer,
    HostlistPropertiesSerializer,
    JobCreateSerializer,
    JobSerializer,
    PropertiesSerializer,
    ReleaseSerializer,
    SubmittedSerializer,
)
from allocation.filtersets import JobFilterSet
from allocation.models import Job
from allocation.services import jobs
from hxportal.api.mixins import OwnWritesMixin, validated
from hxportal.roles import Role

#: Columns a page of jobs reads: the job's own, and only the names of its owner and
#: machine (not the whole user and machine rows, 1,000 times over).
LIST_COLUMNS = (*(f.name for f in Job._meta.concrete_fields), "owner__username",
                "machine__name")


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

    def get_queryset(self):
        queryset = super().get_queryset()
        if self.action == "list":  # a page shows only the names of owner and machine
            queryset = queryset.only(*LIST_COLUMNS)
        return queryset

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


    @extend_schema(request=SubmittedSerializer, responses=JobSerializer)
    @action(detail=True, methods=["post"], filterset_class=None)
    def submitted(self, request, pk=None):
        """The Slurm job id that runs this job (hx-sbatch reports it after ``sbatch``),
        so the sync updates this job instead of adding another."""
        job = self.get_object()
        data = validated(SubmittedSerializer, request)
        job = jobs.record_submission(job, data["slurm_job_id"])
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
