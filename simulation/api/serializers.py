"""Serializers of simulation runs and sweeps (validation of configs is the service's)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from allocation.models import Machine
from hxportal.api.fields import NameRelatedField
from hxportal.validators import no_control_characters
from simulation import services
from simulation.models import SimulationRun, Sweep
from simulation.presets import MAX_SCALE


class SimulationRunSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="api:simulation-run-detail")
    page = serializers.CharField(source="get_absolute_url", read_only=True)
    user = serializers.CharField(source="user.username", read_only=True, allow_null=True)
    machine = serializers.CharField(source="machine.name", read_only=True, allow_null=True)
    sweep = serializers.PrimaryKeyRelatedField(read_only=True)
    duration_seconds = serializers.FloatField(read_only=True, allow_null=True)

    class Meta:
        model = SimulationRun
        fields = ["id", "url", "page", "status", "progress", "sweep", "machine", "config",
                  "engine_version", "config_hash", "summary", "wall_seconds", "attempts",
                  "continued", "error", "user", "created_at", "started_at", "finished_at",
                  "duration_seconds"]
        read_only_fields = fields


class SimulationRunDetailSerializer(SimulationRunSerializer):
    log = serializers.ListField(child=serializers.CharField(), read_only=True)
    result = serializers.JSONField(read_only=True, allow_null=True)
    parameters = serializers.JSONField(read_only=True)

    class Meta(SimulationRunSerializer.Meta):
        fields = [*SimulationRunSerializer.Meta.fields, "parameters", "log", "result"]
        read_only_fields = fields


class RunCreateSerializer(serializers.Serializer):
    config = serializers.JSONField(help_text="Engine configuration keys (README 'Simulation "
                                             "config'); missing keys take the defaults.")
    machine = NameRelatedField(
        slug_field="name", queryset=Machine.objects.all(), required=False, allow_null=True,
        help_text="Take sides and concentration from this machine and partitions from its "
                  "free nodes now.")


class ValidationResultSerializer(serializers.Serializer):
    """``valid`` true with the full config and sizes, or false with the errors."""

    valid = serializers.BooleanField()
    config = serializers.JSONField(required=False)
    endpoints = serializers.IntegerField(required=False)
    switches = serializers.IntegerField(required=False)
    total_vcs = serializers.IntegerField(required=False)
    memory_bytes = serializers.IntegerField(
        required=False, help_text="Estimated peak memory of the run at most, bytes: every "
                                  "buffer full of packets (may exceed HX_SIM_MAX_BYTES).")
    memory_floor_bytes = serializers.IntegerField(
        required=False, help_text="Estimated peak memory at least, bytes (at most "
                                  "HX_SIM_MAX_BYTES): the packet pool at its first size.")
    memory_limit_bytes = serializers.IntegerField(
        required=False, help_text="HX_SIM_MAX_BYTES: a run stops if its packets in "
                                  "flight would take it above this.")
    description = serializers.CharField(required=False)
    config_hash = serializers.CharField(required=False)
    engine_version = serializers.CharField(required=False)
    detail = serializers.CharField(required=False)
    errors = serializers.DictField(child=serializers.ListField(child=serializers.CharField()),
                                   required=False)


class SweepProgressSerializer(serializers.Serializer):
    total = serializers.IntegerField()
    done = serializers.IntegerField()
    succeeded = serializers.IntegerField()
    failed = serializers.IntegerField()
    cancelled = serializers.IntegerField()
    running = serializers.IntegerField()
    pending = serializers.IntegerField()
    fraction = serializers.FloatField()
    status = serializers.CharField()


class SweepSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="api:sweep-detail")
    page = serializers.CharField(source="get_absolute_url", read_only=True)
    user = serializers.CharField(source="user.username", read_only=True, allow_null=True)
    status = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField()

    class Meta:
        model = Sweep
        fields = ["id", "url", "page", "name", "preset", "status", "progress", "run_count",
                  "base", "parameters", "user", "created_at"]
        read_only_fields = fields

    def _progress(self, sweep: Sweep) -> dict:
        cache = self.context.setdefault("_progress", {})
        if sweep.pk not in cache:
            cache[sweep.pk] = services.sweep_progress(sweep)
        return cache[sweep.pk]

    def get_status(self, sweep: Sweep) -> str:
        return self._progress(sweep)["status"]

    @extend_schema_field(SweepProgressSerializer)
    def get_progress(self, sweep: Sweep) -> dict:
        return self._progress(sweep)


class SweepResultRowSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    status = serializers.CharField()
    policy = serializers.CharField()
    pattern = serializers.CharField()
    scenario = serializers.CharField()
    ranks = serializers.IntegerField()
    replicas = serializers.IntegerField()
    routing = serializers.CharField()
    vc_sets = serializers.CharField()
    seed = serializers.IntegerField()
    message_packets = serializers.IntegerField()
    makespan_cycles = serializers.IntegerField(allow_null=True)
    target_cycles = serializers.IntegerField(allow_null=True)
    throughput = serializers.FloatField(allow_null=True)
    latency_mean = serializers.FloatField(allow_null=True)
    latency_p99 = serializers.FloatField(allow_null=True)
    cycles = serializers.IntegerField(allow_null=True)
    completed = serializers.BooleanField(allow_null=True)
    wall_seconds = serializers.FloatField(allow_null=True)
    reused_from = serializers.IntegerField(allow_null=True)
    error = serializers.CharField(allow_blank=True)


class SweepDetailSerializer(SweepSerializer):
    results = serializers.SerializerMethodField(
        help_text="One row per run so far (partial while the sweep runs).")

    class Meta(SweepSerializer.Meta):
        fields = [*SweepSerializer.Meta.fields, "results"]
        read_only_fields = fields

    @extend_schema_field(SweepResultRowSerializer(many=True))
    def get_results(self, sweep: Sweep) -> list[dict]:
        return services.sweep_rows(sweep)


class SweepCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=128, validators=[no_control_characters])
    base = serializers.JSONField(required=False, default=dict,
                                 help_text="Configuration shared by every point.")
    parameters = serializers.JSONField(
        help_text='Config key -> list of values, e.g. {"policy": ["row", "diagonal"], '
                  '"seed": [0, 1]}; one run per point of the product.')


class StudySerializer(serializers.Serializer):
    scale = serializers.IntegerField(min_value=1, max_value=MAX_SCALE, default=1,
                                     help_text="Multiple of the study's kernel volume; "
                                               "max_cycles grows with it.")
    name = serializers.CharField(max_length=128, required=False, allow_blank=True,
                                 validators=[no_control_characters],
                                 default="")
