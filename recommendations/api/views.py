"""Per-job recommendations: ask (operators), read (viewers), accept (the asker or admins)."""

from __future__ import annotations

from django.core.cache import cache
from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from allocation.api.views.jobs import POLICY_CHOICES, JobSerializer, positive_time
from allocation.models import Machine
from allocation.patterns import PatternChoiceField
from hxportal.api.fields import NameRelatedField
from hxportal.api.mixins import OwnWritesMixin, validated
from hxportal.roles import Role
from hxportal.validators import no_control_characters
from recommendations import services as recommendations
from recommendations.filtersets import RecommendationFilterSet
from recommendations.models import Recommendation


class RecommendationRequestSerializer(serializers.Serializer):
    machine = NameRelatedField(slug_field="name", queryset=Machine.objects.all())
    name = serializers.CharField(max_length=128, default="job",
                                 validators=[no_control_characters])
    external_id = serializers.CharField(max_length=64, required=False, allow_blank=True,
                                        default="")
    node_count = serializers.IntegerField(min_value=1, max_value=1_048_576)
    pattern = PatternChoiceField()
    t_cmpt = serializers.FloatField(required=False, allow_null=True, default=None)
    t_comm = serializers.FloatField(required=False, allow_null=True, default=None)
    wall_time = serializers.FloatField(required=False, allow_null=True, default=None)
    compute_fraction = serializers.FloatField(required=False, allow_null=True, default=None,
                                              min_value=0.000001, max_value=1)
    p_abn = serializers.FloatField(required=False, allow_null=True, default=None,
                                   min_value=0, max_value=1)
    alpha_abn = serializers.FloatField(required=False, allow_null=True, default=None)
    t_bench = serializers.FloatField(required=False, allow_null=True, default=None)
    simulate = serializers.BooleanField(default=True, help_text="false: analytic ranking only")

    def validate_t_cmpt(self, value):
        return positive_time(value)

    def validate_t_comm(self, value):
        return positive_time(value, allow_zero=True)

    def validate_wall_time(self, value):
        return positive_time(value)

    def validate_t_bench(self, value):
        return positive_time(value)

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
        return {k: v for k, v in rec.inputs.items()
                if k not in ("candidates", "held_endpoints")}

    def get_progress(self, rec: Recommendation) -> dict:
        return self.context.get("progress") or recommendations.prediction_progress(rec)

    def get_cached(self, rec: Recommendation) -> bool:
        return bool(self.context.get("cached"))


def cached_answer(rec: Recommendation, request, context: dict) -> HttpResponse:
    """A repeated question answered by a ready recommendation, rendered once per
    process: its body changes only with its status (accept), its predictions'
    progress and the host in its URL, which make the key. This skips the
    serializer and the JSON encoder for the 50-70 KB ranking on every repeat."""
    progress = recommendations.prediction_progress(rec)
    key = (f"hx:rec-answer:{rec.pk}:{rec.status}:{rec.finished_at.isoformat()}:"
           f"{progress['done']}/{progress['simulations']}:{request.get_host()}")
    body = cache.get(key)
    if body is None:
        data = RecommendationSerializer(rec, context={**context, "progress": progress}).data
        body = JSONRenderer().render(data)
        cache.set(key, body, timeout=recommendations.CACHE_SECONDS)
    return HttpResponse(body, content_type="application/json", status=status.HTTP_200_OK)


class AcceptSerializer(serializers.Serializer):
    policy = serializers.ChoiceField(choices=POLICY_CHOICES, required=False,
                                     help_text="default: the recommended policy")


class RecommendationViewSet(OwnWritesMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin,
                            viewsets.GenericViewSet):
    """Operators ask for a recommendation (202 while simulations run, 200 when cached)
    and accept their own; viewers read every recommendation."""

    queryset = Recommendation.objects.select_related("machine", "user").order_by(
        "-created_at", "-id")
    serializer_class = RecommendationSerializer
    filterset_class = RecommendationFilterSet
    read_role = Role.VIEWER
    write_role = Role.OPERATOR

    def get_object(self):
        return recommendations.refresh(super().get_object())

    @extend_schema(request=RecommendationRequestSerializer,
                   responses={200: RecommendationSerializer, 202: RecommendationSerializer})
    def create(self, request, *args, **kwargs):
        data = validated(RecommendationRequestSerializer, request)
        rec, cached = recommendations.request_recommendation(user=request.user, **data)
        context = {**self.get_serializer_context(), "cached": cached}
        if cached and rec.status == "ready" and request.accepted_renderer.format == "json":
            return cached_answer(rec, request, context)
        code = status.HTTP_202_ACCEPTED if rec.status == "computing" else status.HTTP_200_OK
        return Response(RecommendationSerializer(rec, context=context).data, status=code)

    @extend_schema(request=AcceptSerializer, responses={201: JobSerializer})
    @action(detail=True, methods=["post"], filterset_class=None)
    def accept(self, request, pk=None):
        """Allocate the recommended policy with N_node + N_spare nodes (once)."""
        rec = self.get_object()  # another operator's recommendation is a 404 first
        data = validated(AcceptSerializer, request)
        job = recommendations.accept(rec, request.user, data.get("policy"))
        return Response(JobSerializer(job, context=self.get_serializer_context()).data,
                        status=status.HTTP_201_CREATED)
