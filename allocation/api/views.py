"""Thin API views: declare roles, serializers and filters; services do the writing."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from allocation import queries, services
from allocation.api.serializers import (
    MachineDetailSerializer,
    MachineSerializer,
    MachineUpdateSerializer,
    NodeRenameSerializer,
    NodeSerializer,
    NodeStateChangeResultSerializer,
    NodeStateChangeSerializer,
)
from allocation.filtersets import MachineFilterSet, NodeFilterSet
from allocation.models import Machine
from hxportal import hostlists
from hxportal.roles import Role


class MachineViewSet(viewsets.ModelViewSet):
    """HyperX machines: everyone signed in reads, admins create, edit and delete."""

    queryset = queries.machines()
    lookup_field = "name"
    lookup_value_regex = r"[A-Za-z][A-Za-z0-9_.-]{0,63}"
    filterset_class = MachineFilterSet
    read_role = Role.VIEWER
    write_role = Role.ADMIN
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]

    def get_serializer_class(self):
        if self.action == "retrieve":
            return MachineDetailSerializer
        if self.action == "partial_update":
            return MachineUpdateSerializer
        return MachineSerializer

    def perform_create(self, serializer):
        data = serializer.validated_data
        serializer.instance = services.create_machine(
            name=data["name"], sides=data["sides"], concentration=data["concentration"],
            hostname_pattern=data.get("hostname_pattern", ""),
            hostlist=data.get("hostlist", ""), description=data.get("description", ""))

    def perform_update(self, serializer):
        serializer.instance = services.update_machine(
            serializer.instance, description=serializer.validated_data.get(
                "description", serializer.instance.description))

    def perform_destroy(self, instance: Machine):
        services.delete_machine(instance)


class NodeViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.UpdateModelMixin,
                  viewsets.GenericViewSet):
    """Nodes: filter by machine, state, switch, coordinates or hostlist; operators
    change state in bulk by hostlist; admins rename."""

    queryset = queries.nodes_with_job().order_by("machine__name", "index")
    serializer_class = NodeSerializer
    filterset_class = NodeFilterSet
    read_role = Role.VIEWER
    write_role = Role.ADMIN
    action_roles = {"state": Role.OPERATOR}
    http_method_names = ["get", "post", "patch", "head", "options"]

    @extend_schema(request=NodeRenameSerializer, responses=NodeSerializer)
    def partial_update(self, request, *args, **kwargs):
        node = self.get_object()
        rename = NodeRenameSerializer(data=request.data)
        rename.is_valid(raise_exception=True)
        services.rename_node(node, rename.validated_data["hostname"])
        return Response(self.get_serializer(self.get_queryset().get(pk=node.pk)).data)

    def update(self, request, *args, **kwargs):
        if not kwargs.get("partial"):
            return self.http_method_not_allowed(request, *args, **kwargs)
        return super().update(request, *args, **kwargs)

    @extend_schema(request=NodeStateChangeSerializer, responses=NodeStateChangeResultSerializer)
    @action(detail=False, methods=["post"], filterset_class=None)
    def state(self, request):
        """Drain, down or return to service every node of a hostlist (with a reason)."""
        change = NodeStateChangeSerializer(data=request.data)
        change.is_valid(raise_exception=True)
        data = change.validated_data
        nodes = services.set_node_state(data["machine"], data["hostlist"], data["state"],
                                        data.get("reason", ""))
        result = {"machine": data["machine"].name,
                  "hostlist": hostlists.compress(n.hostname for n in nodes),
                  "state": data["state"], "changed": len(nodes)}
        return Response(NodeStateChangeResultSerializer(result).data, status=status.HTTP_200_OK)
