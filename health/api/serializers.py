"""API shapes of node health: benchmark results and uploads, estimates, estimation
runs, spares, select-fastest and per-node suspicion. The services validate the
uploads (naming rows); these say what the requests and answers look like."""

from __future__ import annotations

import math

from rest_framework import serializers

from allocation.models import Machine
from health import services as health
from health.constants import DEFAULT_WINDOW_DAYS, MAX_WINDOW_DAYS
from health.models import BENCHMARK_NAME_VALIDATOR, BenchmarkResult, Estimate, EstimationRun
from hxportal import ownership
from hxportal.api.fields import NameRelatedField

# --------------------------------------------------------------------------
# Benchmarks


class BenchmarkResultSerializer(serializers.ModelSerializer):
    machine = serializers.CharField(source="machine.name", read_only=True)
    node = serializers.CharField(source="node.hostname", read_only=True)
    job_external_id = serializers.CharField(source="job.external_id", read_only=True,
                                            default="")
    round = serializers.IntegerField(source="health_round_id", read_only=True, allow_null=True,
                                     help_text="The health round (no job), else null.")

    class Meta:
        model = BenchmarkResult
        fields = ["id", "machine", "job", "job_external_id", "round", "node", "benchmark",
                  "seconds", "measured_at", "created_at"]
        read_only_fields = fields
        extra_kwargs = {"job": {"allow_null": True, "help_text": (
            "null for a health round, and for another user's job when HX_PRIVATE_DATA is on")}}

    def to_representation(self, instance):
        data = super().to_representation(instance)
        user = getattr(self.context.get("request"), "user", None)
        if user is not None and instance.job_id and not ownership.reads_everything(user) \
                and instance.job.owner_id != user.pk:
            data.update(job=None, job_external_id="")  # node data stays; the job is private
        return data


class BenchmarkTimeSerializer(serializers.Serializer):
    node = serializers.CharField(max_length=63)
    seconds = serializers.FloatField(help_text="Seconds, > 0.")
    measured_at = serializers.DateTimeField(required=False)


class BenchmarkUploadSerializer(serializers.Serializer):
    """The JSON upload (documentation; the service validates, naming rows)."""

    job = serializers.CharField(max_length=64, required=False,
                                help_text="Portal id or external id; the rows must be the "
                                          "job's own nodes.")
    machine = serializers.CharField(max_length=64, required=False, help_text=(
        "Instead of job: a health round, a fleet-wide benchmark of the machine's nodes "
        "outside any job."))
    benchmark = serializers.CharField(max_length=64)
    measured_at = serializers.DateTimeField(required=False)
    results = BenchmarkTimeSerializer(many=True)


class IngestGroupSerializer(serializers.Serializer):
    job = serializers.IntegerField(allow_null=True)
    round = serializers.IntegerField(allow_null=True, help_text="The health round created.")
    external_id = serializers.CharField()
    machine = serializers.CharField()
    benchmark = serializers.CharField()
    count = serializers.IntegerField()
    nodes = serializers.CharField(help_text="Hostlist of the nodes stored.")


class IngestResultSerializer(serializers.Serializer):
    stored = serializers.IntegerField()
    replaced = serializers.IntegerField(help_text="Rows of the same jobs/benchmarks replaced.")
    groups = IngestGroupSerializer(many=True)


# --------------------------------------------------------------------------
# Estimates and estimation runs


class EstimateSerializer(serializers.ModelSerializer):
    machine = serializers.CharField(source="machine.name", read_only=True)
    alpha_abn = serializers.FloatField(allow_null=True, read_only=True)
    run = serializers.IntegerField(source="run_id", allow_null=True, read_only=True)
    rule = serializers.JSONField(read_only=True)

    class Meta:
        model = Estimate
        fields = ["id", "machine", "benchmark", "window_start", "window_end", "runs",
                  "abnormal_runs", "jobs", "nodes", "t_bench", "alpha_abn", "alpha_abn_low",
                  "alpha_abn_high", "p_abn",
                  "p_abn_low", "p_abn_high", "confidence", "rule", "created_at", "run"]
        read_only_fields = fields


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
    release = serializers.BooleanField(required=False, allow_null=True, default=None, help_text=(
        "Dropped spares go back to Slurm after the benchmark and cost only its time "
        "(default: the site's HX_SPARES_RELEASED)."))

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
    release = serializers.BooleanField(
        help_text="Costs count dropped spares at their benchmark time only.")
    per_node = serializers.BooleanField()
    chosen = serializers.CharField(allow_null=True,
                                   help_text="per_node: hostlist of the nodes to allocate.")
    curve_points = serializers.IntegerField()
    curve_downsampled = serializers.BooleanField()
    curve_note = serializers.CharField()
    parameters_source = serializers.CharField()
    estimate = SpareEstimateRefSerializer(allow_null=True)


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
    allow_fewer = serializers.BooleanField(default=False, help_text=(
        "With record_roles: record even if the job is left with fewer primary nodes than "
        "its node count (refused otherwise)."))


class SelectFastestResultSerializer(serializers.Serializer):
    job = serializers.IntegerField(allow_null=True)
    benchmark = serializers.CharField(allow_null=True)
    n_node = serializers.IntegerField()
    n_spare = serializers.IntegerField()
    n_keep = serializers.IntegerField(help_text="Nodes kept (n_node unless short).")
    short = serializers.IntegerField(help_text="How many fewer than n_node could be kept.")
    keep = serializers.CharField(help_text="Hostlist of the n_node fastest nodes.")
    dropped = serializers.CharField(help_text="Every other node of the job.")
    unavailable = serializers.CharField(help_text="Dropped because drained or down (never "
                                                  "kept).")
    untimed = serializers.CharField(help_text="The job's nodes without a time (dropped).")
    ignored = serializers.CharField(help_text="Stored times of nodes that are not the "
                                              "job's (not considered).")
    abnormal = serializers.CharField(help_text="Dropped nodes that look abnormal.")
    abnormal_kept = serializers.CharField(help_text="Kept nodes that look abnormal.")
    median = serializers.FloatField()
    ratio_threshold = serializers.FloatField()
    rule = serializers.CharField()
    roles = serializers.DictField(child=serializers.IntegerField(), allow_null=True)


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
