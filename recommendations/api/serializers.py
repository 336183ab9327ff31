"""API shapes of per-job recommendations: the request, the answer and accepting one."""

from __future__ import annotations

from rest_framework import serializers

from allocation.api.serializers.jobs import POLICY_CHOICES, positive_time, time_field
from allocation.layout import MAX_NODES
from allocation.models import Machine
from allocation.pattern_fields import PatternChoiceField
from hxportal.api.fields import NameRelatedField
from hxportal.validators import no_control_characters
from recommendations import services as recommendations
from recommendations.constants import SNAPSHOT_INPUTS
from recommendations.models import Recommendation


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


class RecommendationSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="api:recommendation-detail")
    machine = serializers.CharField(source="machine.name", read_only=True)
    user = serializers.CharField(source="user.username", read_only=True)
    inputs = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField()
    cached = serializers.SerializerMethodField()

    class Meta:
        model = Recommendation
        fields = ["id", "url", "machine", "user", "name", "external_id", "node_count",
                  "pattern", "inputs", "status", "method", "note", "recommended", "ranking",
                  "progress", "cached", "deadline", "created_at", "finished_at", "job",
                  "accepted_at"]
        read_only_fields = fields

    def get_inputs(self, rec: Recommendation) -> dict:
        return {k: v for k, v in rec.inputs.items() if k not in SNAPSHOT_INPUTS}

    def get_progress(self, rec: Recommendation) -> dict:
        return self.context.get("progress") or recommendations.prediction_progress(rec)

    def get_cached(self, rec: Recommendation) -> bool:
        return bool(self.context.get("cached"))


class AcceptSerializer(serializers.Serializer):
    policy = serializers.ChoiceField(choices=POLICY_CHOICES, required=False,
                                     help_text="default: the recommended policy")
