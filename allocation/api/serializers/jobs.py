"""API shapes for jobs, allocation previews, policy comparison and partition properties.

``time_field`` is the one definition of a time in seconds that a request may give
(jobs, releases, recommendations), so every endpoint refuses the same values with
the same words.
"""

from __future__ import annotations

import math

from rest_framework import serializers

from allocation.layout import MAX_NODES, MAX_PARTITION_INDEX
from allocation.models import Job, JobStatus, Machine
from allocation.pattern_fields import PatternChoiceField
from allocation.services import jobs
from hxportal import hostlists
from hxportal.api.fields import NameRelatedField, RowUrlField
from hxportal.validators import no_control_characters

POLICY_CHOICES = jobs.ONLINE_POLICIES


def positive_time(value: float | None, *, allow_zero: bool = False) -> float | None:
    """``value`` if it is a finite time > 0 (>= 0 with ``allow_zero``); None passes."""
    if value is None:
        return None
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise serializers.ValidationError("must be a finite number > 0"
                                          if not allow_zero else "must be finite and >= 0")
    return value


def _time_or_zero(value: float | None) -> float | None:
    return positive_time(value, allow_zero=True)


def time_field(*, zero: bool = False, **kwargs) -> serializers.FloatField:
    """An optional time in seconds (null when not given): more than 0, or at least 0
    with ``zero`` (a communication time may be nil)."""
    return serializers.FloatField(required=False, allow_null=True, default=None,
                                  validators=[_time_or_zero if zero else positive_time],
                                  **kwargs)


class JobListSerializer(serializers.ListSerializer):
    """Reads the hostlists of every job on the page in one query (not one per row)."""

    def to_representation(self, data):
        rows = list(data.all() if hasattr(data, "all") else data)
        cache = self.context.setdefault("_hostlists", {})
        cache.update(jobs.jobs_hostlists([job.pk for job in rows if job.pk not in cache]))
        return super().to_representation(rows)


class JobSerializer(serializers.ModelSerializer):
    url = RowUrlField(view_name="api:job-detail")
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
                  "actual_runtime", "created_at", "allocated_at", "finished_at",
                  "source", "slurm_job_id", "slurm_user", "slurm_state", "slurm_partition",
                  "exit_code"]
        read_only_fields = fields
        list_serializer_class = JobListSerializer

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
    t_cmpt = time_field()
    t_comm = time_field(zero=True)
    wall_time = time_field()
    policy = serializers.ChoiceField(choices=POLICY_CHOICES, required=False,
                                     help_text="Allocate at once with this policy.")
    seed = serializers.IntegerField(min_value=0, max_value=jobs.MAX_SEED, required=False,
                                    default=0)
    spares = serializers.IntegerField(min_value=0, max_value=MAX_NODES, required=False,
                                      default=0)


class AllocateSerializer(serializers.Serializer):
    policy = serializers.ChoiceField(choices=POLICY_CHOICES)
    seed = serializers.IntegerField(min_value=0, max_value=jobs.MAX_SEED, default=0)
    spares = serializers.IntegerField(min_value=0, max_value=MAX_NODES, default=0)
    mode = serializers.ChoiceField(choices=["online", "formula"], default="online",
                                   help_text="online: among free healthy nodes; formula: the "
                                             "static partition (2D n x n, c = n, k*n^2 nodes)")
    index = serializers.IntegerField(min_value=0, max_value=MAX_PARTITION_INDEX, default=0,
                                     help_text="formula partition index (mode formula)")


class ReleaseSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=sorted(JobStatus.terminal()),
                                     default=JobStatus.COMPLETED)
    actual_runtime = time_field()


class SubmittedSerializer(serializers.Serializer):
    slurm_job_id = serializers.IntegerField(min_value=1, max_value=2**63 - 1,
                                            help_text="The id sbatch printed.")


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
