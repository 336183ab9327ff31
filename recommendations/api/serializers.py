"""API shapes of per-job recommendations: the request, the answer and accepting one."""

from __future__ import annotations

from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from allocation.api.serializers.jobs import POLICY_CHOICES, positive_time, time_field
from allocation.layout import MAX_NODES
from allocation.models import Machine
from allocation.pattern_fields import PatternChoiceField
from hxportal.api.fields import NameRelatedField
from hxportal.validators import no_control_characters
from recommendations import services as recommendations
from recommendations.constants import MAX_CALIBRATION_AXIS, SNAPSHOT_INPUTS
from recommendations.models import Calibration, Recommendation


class RecommendationRequestSerializer(serializers.Serializer):
    machine = NameRelatedField(slug_field="name", queryset=Machine.objects.all())
    name = serializers.CharField(max_length=128, default="job",
                                 validators=[no_control_characters])
    external_id = serializers.CharField(max_length=64, required=False, allow_blank=True,
                                        default="")
    node_count = serializers.IntegerField(min_value=1, max_value=MAX_NODES)
    pattern = PatternChoiceField()
    t_cmpt = time_field()
    t_comm = time_field(zero=True)
    wall_time = time_field()
    compute_fraction = serializers.FloatField(required=False, allow_null=True, default=None,
                                              min_value=0.000001, max_value=1)
    p_abn = serializers.FloatField(required=False, allow_null=True, default=None,
                                   min_value=0, max_value=1)
    alpha_abn = serializers.FloatField(required=False, allow_null=True, default=None)
    t_bench = time_field()
    simulate = serializers.BooleanField(default=True, help_text="false: analytic ranking only")

    def validate_alpha_abn(self, value):
        if value is not None and not value > 1:
            raise serializers.ValidationError("must be > 1")
        return positive_time(value)


class CalibrationRefSerializer(serializers.Serializer):
    """The calibration a recommendation was interpolated from, and how old it is."""

    id = serializers.IntegerField()
    status = serializers.CharField()
    engine_version = serializers.CharField()
    occupancy_model = serializers.CharField()
    finished_at = serializers.DateTimeField(allow_null=True)
    age_seconds = serializers.FloatField(allow_null=True)
    points_done = serializers.IntegerField()
    run_count = serializers.IntegerField()


class RecommendationSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="api:recommendation-detail")
    machine = serializers.CharField(source="machine.name", read_only=True)
    user = serializers.CharField(source="user.username", read_only=True)
    inputs = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField()
    cached = serializers.SerializerMethodField()
    calibration = serializers.SerializerMethodField()

    class Meta:
        model = Recommendation
        fields = ["id", "url", "machine", "user", "name", "external_id", "node_count",
                  "pattern", "inputs", "status", "method", "calibration", "note",
                  "recommended", "ranking", "progress", "cached", "deadline", "created_at",
                  "finished_at", "job", "accepted_at"]
        read_only_fields = fields

    def get_inputs(self, rec: Recommendation) -> dict:
        return {k: v for k, v in rec.inputs.items() if k not in SNAPSHOT_INPUTS}

    def get_progress(self, rec: Recommendation) -> dict:
        return self.context.get("progress") or recommendations.prediction_progress(rec)

    def get_cached(self, rec: Recommendation) -> bool:
        return bool(self.context.get("cached"))

    @extend_schema_field(CalibrationRefSerializer(allow_null=True))
    def get_calibration(self, rec: Recommendation) -> dict | None:
        """The calibration the answer (or its stand-ins) came from, with its age."""
        calibration = rec.calibration
        if calibration is None:
            return None
        age = (timezone.now() - calibration.finished_at).total_seconds() \
            if calibration.finished_at else None
        return {"id": calibration.pk, "status": calibration.status,
                "engine_version": calibration.engine_version,
                "occupancy_model": calibration.occupancy_model,
                "finished_at": calibration.finished_at,
                "age_seconds": round(age, 1) if age is not None else None,
                "points_done": calibration.points_done, "run_count": calibration.run_count}


class AcceptSerializer(serializers.Serializer):
    policy = serializers.ChoiceField(choices=POLICY_CHOICES, required=False,
                                     help_text="default: the recommended policy")


def _axis(child) -> serializers.ListField:
    return serializers.ListField(child=child, required=False, min_length=1,
                                 max_length=MAX_CALIBRATION_AXIS)


class CalibrationStartSerializer(serializers.Serializer):
    """Start a calibration of a machine's shape; each axis given replaces the default
    grid's (patterns, job sizes, machine loads, policies, seeds)."""

    machine = NameRelatedField(slug_field="name", queryset=Machine.objects.all())
    patterns = _axis(serializers.CharField(max_length=24))
    sizes = _axis(serializers.IntegerField(min_value=2, max_value=MAX_NODES))
    loads = _axis(serializers.FloatField(min_value=0, max_value=0.9))
    policies = _axis(serializers.ChoiceField(choices=POLICY_CHOICES))
    seeds = _axis(serializers.IntegerField(min_value=0, max_value=2**31 - 1))


class CalibrationSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="api:calibration-detail")
    machine = serializers.CharField(source="machine.name", read_only=True)
    shape = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField()
    patterns = serializers.SerializerMethodField()
    age_seconds = serializers.SerializerMethodField()

    class Meta:
        model = Calibration
        fields = ["id", "url", "machine", "shape", "sides", "concentration", "engine_version",
                  "occupancy_model", "status", "note", "grid", "run_count", "points_done",
                  "run_seconds", "progress", "patterns", "sweep", "created_at", "finished_at",
                  "age_seconds"]
        read_only_fields = fields

    def get_shape(self, calibration: Calibration) -> str:
        return calibration.machine.shape

    def get_progress(self, calibration: Calibration) -> dict:
        progress = recommendations.calibration_progress(calibration)
        return {k: progress[k] for k in ("total", "done", "succeeded", "failed",
                                         "memory_stopped", "running", "pending", "fraction")
                if k in progress}

    def get_patterns(self, calibration: Calibration) -> list[str]:
        """Patterns the table answers for (so far)."""
        return sorted((calibration.table or {}).get("cells", {}))

    def get_age_seconds(self, calibration: Calibration) -> float | None:
        if calibration.finished_at is None:
            return None
        return round((timezone.now() - calibration.finished_at).total_seconds(), 1)
