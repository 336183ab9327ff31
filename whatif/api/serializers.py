"""Serializers of what-if studies (the workload's checks are the service's)."""

from __future__ import annotations

from rest_framework import serializers

from allocation.models import Machine
from hxportal.api.fields import NameRelatedField
from hxportal.validators import no_control_characters
from whatif import constants
from whatif.choices import WorkloadFormat
from whatif.models import WhatIfStudy
from whatif.services import POLICIES as ONLINE_POLICIES


class StudySerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="api:whatif-detail")
    page = serializers.CharField(source="get_absolute_url", read_only=True)
    machine = serializers.CharField(source="machine.name", read_only=True)
    user = serializers.CharField(source="user.username", read_only=True, allow_null=True)
    runs_done = serializers.IntegerField(read_only=True, default=0)

    class Meta:
        model = WhatIfStudy
        fields = ["id", "url", "page", "name", "machine", "source", "policies", "spares",
                  "release", "seeds", "ideal", "model", "workload_info", "run_count",
                  "runs_done", "user", "created_at"]
        read_only_fields = fields


class StudyCreateSerializer(serializers.Serializer):
    """A study: the workload (upload for swf and sacct), the scenarios, the seeds."""

    machine = NameRelatedField(slug_field="name", queryset=Machine.objects.all())
    format = serializers.ChoiceField(choices=WorkloadFormat.choices)
    workload = serializers.FileField(required=False, allow_null=True,
                                     help_text="The log (swf or sacct formats).")
    policies = serializers.ListField(child=serializers.ChoiceField(choices=ONLINE_POLICIES),
                                     min_length=1, max_length=len(ONLINE_POLICIES))
    spares = serializers.ListField(child=serializers.CharField(max_length=16), min_length=1,
                                   max_length=10, default=["none"],
                                   help_text="none, a whole number N, or recommended")
    seeds = serializers.IntegerField(min_value=1, max_value=constants.MAX_SEEDS, default=1)
    ideal = serializers.BooleanField(default=False)
    release = serializers.BooleanField(default=True,
                                       help_text="Dropped spares go back after the benchmark.")
    name = serializers.CharField(max_length=128, required=False, default="",
                                 validators=[no_control_characters])
    days = serializers.FloatField(required=False, allow_null=True, default=None,
                                  min_value=0.01, max_value=366,
                                  help_text=f"Synthetic: days (default {constants.SYNTHETIC_DAYS})")
    load = serializers.FloatField(required=False, allow_null=True, default=None,
                                  min_value=0.01, max_value=20,
                                  help_text=f"Synthetic: load factor (default "
                                            f"{constants.SYNTHETIC_LOAD})")


class DemoSerializer(serializers.Serializer):
    machine = NameRelatedField(slug_field="name", queryset=Machine.objects.all())
    format = serializers.ChoiceField(choices=WorkloadFormat.choices,
                                     default=WorkloadFormat.SYNTHETIC,
                                     help_text="synthetic (a month) or history (synced jobs)")


class ProgressSerializer(serializers.Serializer):
    status = serializers.CharField()
    runs = serializers.DictField(child=serializers.IntegerField())
    total = serializers.IntegerField()
    fraction = serializers.FloatField()


class ResultsSerializer(serializers.Serializer):
    """The command's JSON: ``scenarios`` (policy, spares, summary, jobs) and beside it
    ``details`` (intervals, chart data), ``best`` and the study's settings."""

    machine = serializers.CharField()
    format = serializers.CharField()
    seeds = serializers.IntegerField()
    ideal = serializers.BooleanField()
    left_out = serializers.IntegerField()
    scenarios = serializers.ListField(child=serializers.JSONField())
    details = serializers.ListField(child=serializers.JSONField())
    best = serializers.DictField(child=serializers.ListField(child=serializers.IntegerField()))
    progress = ProgressSerializer()
