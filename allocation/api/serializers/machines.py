"""API shapes for machines and nodes. Validation names the field; services write."""

from __future__ import annotations

from django.db.models import Count, Q
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from allocation.layout import (
    MAX_CONCENTRATION,
    MAX_DIMENSIONS,
    MAX_SIDE,
    LayoutError,
    validate_shape,
)
from allocation.models import Machine, Node, NodeState
from allocation.models.machines import NAME_VALIDATOR
from allocation.services import slurm
from hxportal import hostlists
from hxportal.api.fields import NameRelatedField


class MachineSerializer(serializers.ModelSerializer):
    sides = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=MAX_SIDE),
        min_length=1, max_length=MAX_DIMENSIONS,
        help_text="Switches per dimension, e.g. [8, 8] or [16, 16, 16].")
    concentration = serializers.IntegerField(min_value=1, max_value=MAX_CONCENTRATION)
    hostname_pattern = serializers.CharField(
        max_length=128, required=False, allow_blank=True,
        help_text="Python format with {n} (1-based), {i}, {s}, {l}, {d0}..; default NAME{n:0Wd}.")
    hostlist = serializers.CharField(
        max_length=hostlists.MAX_HOSTLIST_CHARS, required=False, allow_blank=True,
        write_only=True, help_text="Slurm hostlist mapped in order onto the nodes.")
    dimensions = serializers.IntegerField(read_only=True)
    switch_count = serializers.IntegerField(read_only=True)
    node_count = serializers.IntegerField(read_only=True)
    url = serializers.HyperlinkedIdentityField(view_name="api:machine-detail",
                                               lookup_field="name")

    class Meta:
        model = Machine
        fields = ["url", "name", "description", "sides", "concentration", "hostname_pattern",
                  "hostlist", "dimensions", "switch_count", "node_count", "created_at"]
        read_only_fields = ["created_at"]
        # Name uniqueness is the service's to decide (a 409), not a 400 here.
        extra_kwargs = {"name": {"validators": [NAME_VALIDATOR]}}

    def validate(self, attrs):
        if self.instance is None:
            try:
                validate_shape(attrs.get("sides"), attrs.get("concentration"))
            except LayoutError as exc:
                raise serializers.ValidationError({exc.field: [exc.message]}) from exc
        return attrs


class MachineUpdateSerializer(serializers.ModelSerializer):
    class Meta:
        model = Machine
        fields = ["description"]


class SlurmLinkSerializer(serializers.Serializer):
    """A machine's link to Slurm: its settings and how its syncs went."""

    enabled = serializers.BooleanField(help_text="Beat syncs it every interval_seconds.")
    partition = serializers.CharField(help_text="Only this Slurm partition; blank: all.")
    interval_seconds = serializers.IntegerField()
    last_attempt_at = serializers.DateTimeField(allow_null=True)
    last_success_at = serializers.DateTimeField(allow_null=True)
    age_seconds = serializers.FloatField(allow_null=True,
                                         help_text="Since the last successful sync.")
    last_error = serializers.CharField(help_text="One line; blank after a success.")
    last_error_at = serializers.DateTimeField(allow_null=True)
    consecutive_failures = serializers.IntegerField()
    failures_total = serializers.IntegerField()
    syncs_total = serializers.IntegerField()
    last_duration_seconds = serializers.FloatField(allow_null=True)
    last_counts = serializers.DictField()
    healthy = serializers.BooleanField()


class SlurmSyncQueuedSerializer(serializers.Serializer):
    queued = serializers.BooleanField()
    slurm = SlurmLinkSerializer(allow_null=True)


class MachineDetailSerializer(MachineSerializer):
    nodes_hostlist = serializers.SerializerMethodField(
        help_text="Every node of the machine as a compressed hostlist.")
    node_states = serializers.SerializerMethodField()
    slurm = serializers.SerializerMethodField(help_text="The link to Slurm; null: not linked.")

    class Meta(MachineSerializer.Meta):
        fields = [*MachineSerializer.Meta.fields, "nodes_hostlist", "node_states", "slurm"]

    @extend_schema_field(SlurmLinkSerializer(allow_null=True))
    def get_slurm(self, machine: Machine) -> dict | None:
        status = slurm.link_status(machine)
        return None if status is None else SlurmLinkSerializer(status).data

    def get_nodes_hostlist(self, machine: Machine) -> str:
        return hostlists.compress(machine.nodes.values_list("hostname", flat=True))

    def get_node_states(self, machine: Machine) -> dict[str, int]:
        counts = machine.nodes.aggregate(
            **{state: Count("id", filter=Q(state=state)) for state in NodeState.values},
            allocated=Count("id", filter=Q(allocations__released_at__isnull=True)))
        return counts


class NodeSerializer(serializers.ModelSerializer):
    machine = serializers.CharField(source="machine.name", read_only=True)
    job = serializers.IntegerField(read_only=True, allow_null=True,
                                   help_text="The job holding the node, if any (null for another "
                                             "user's job when HX_PRIVATE_DATA is on).")
    allocated = serializers.SerializerMethodField()

    class Meta:
        model = Node
        fields = ["id", "machine", "index", "hostname", "coords", "switch", "local", "state",
                  "state_reason", "state_changed_at", "allocated", "job"]
        read_only_fields = ["index", "coords", "switch", "local", "state", "state_reason",
                            "state_changed_at"]

    def get_allocated(self, node: Node) -> bool:
        return bool(getattr(node, "held", False))


class NodeRenameSerializer(serializers.Serializer):
    hostname = serializers.CharField(max_length=63)


class NodeStateChangeSerializer(serializers.Serializer):
    machine = NameRelatedField(slug_field="name", queryset=Machine.objects.all())
    hostlist = serializers.CharField(max_length=hostlists.MAX_HOSTLIST_CHARS)
    state = serializers.ChoiceField(choices=NodeState.choices)
    reason = serializers.CharField(max_length=255, required=False, allow_blank=True,
                                   default="")


class NodeStateChangeResultSerializer(serializers.Serializer):
    machine = serializers.CharField()
    hostlist = serializers.CharField()
    state = serializers.CharField()
    changed = serializers.IntegerField()
