"""Machines and nodes (API). Thin: declare roles, serializers and filters; services write."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from allocation import slurm_topology
from allocation.api.serializers.jobs import (
    CandidateSerializer,
    CompareSerializer,
    ComparisonSerializer,
    PreviewSerializer,
)
from allocation.api.serializers.machines import (
    MachineDetailSerializer,
    MachineSerializer,
    MachineUpdateSerializer,
    NodeRenameSerializer,
    NodeSerializer,
    NodeStateChangeResultSerializer,
    NodeStateChangeSerializer,
    SlurmSyncQueuedSerializer,
)
from allocation.filtersets import MachineFilterSet, NodeFilterSet
from allocation.models import Machine
from allocation.services import jobs, machines, queries, slurm, slurm_sync
from hxportal import hostlists
from hxportal.api.mixins import validated
from hxportal.api.renderers import PlainTextRenderer
from hxportal.errors import fields_renamed
from hxportal.roles import Role

#: The preview and compare input names the node count ``size``; services say ``node_count``.
SIZE_FIELD = {"node_count": "size"}


class MachineViewSet(viewsets.ModelViewSet):
    """HyperX machines: everyone signed in reads, admins create, edit and delete."""

    queryset = queries.machines()
    lookup_field = "name"
    lookup_value_regex = r"[A-Za-z][A-Za-z0-9_.-]{0,63}"
    filterset_class = MachineFilterSet
    read_role = Role.VIEWER
    write_role = Role.ADMIN
    action_roles = {"preview": Role.VIEWER, "compare": Role.VIEWER, "topology": Role.VIEWER,
                    "slurm_sync": Role.OPERATOR}
    extra_query_params: tuple[str, ...] = ()
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]

    @extend_schema(request=PreviewSerializer, responses=CandidateSerializer)
    @action(detail=True, methods=["post"], filterset_class=None)
    def preview(self, request, name=None):
        """The partition a policy would give a job of ``size`` nodes now (nothing stored)."""
        data = validated(PreviewSerializer, request)
        with fields_renamed(SIZE_FIELD):
            candidate = jobs.propose(self.get_object(), data["policy"], data["size"],
                                     data["seed"], mode=data["mode"], index=data["index"])
        if candidate.error:
            return Response({"detail": candidate.error,
                             "errors": {"size": [candidate.error]}}, status=400)
        return Response(CandidateSerializer(candidate.as_dict()).data)

    @extend_schema(request=CompareSerializer, responses=ComparisonSerializer)
    @action(detail=True, methods=["post"], filterset_class=None)
    def compare(self, request, name=None):
        """Every policy's candidate partition for ``size`` nodes on the current occupancy."""
        data = validated(CompareSerializer, request)
        machine = self.get_object()
        with fields_renamed(SIZE_FIELD):
            candidates = jobs.compare_policies(machine, data["size"], data["seed"])
        return Response(ComparisonSerializer({
            "machine": machine.name, "size": data["size"],
            "candidates": [c.as_dict() for c in candidates]}).data)

    @extend_schema(parameters=[OpenApiParameter(
        "kind", str, enum=list(slurm_topology.FORMATS), default=slurm_topology.DEFAULT_KIND,
        description="; ".join(f"{k}: {v}" for k, v in slurm_topology.DESCRIPTIONS.items()))],
        responses={(200, "text/plain"): str})
    @action(detail=True, methods=["get"], filterset_class=None,
            renderer_classes=[PlainTextRenderer], extra_query_params=("kind",))
    def topology(self, request, name=None):
        """Slurm topology.conf (a topology/tree grouping or block) or node features."""
        kind = request.query_params.get("kind", slurm_topology.DEFAULT_KIND)
        text = jobs.topology_file(self.get_object(), kind)
        filename = f"{name}-{kind}.conf"
        return Response(text, content_type="text/plain; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="{filename}"'})

    @extend_schema(request=None, responses={202: SlurmSyncQueuedSerializer})
    @action(detail=True, methods=["post"], filterset_class=None, url_path="slurm-sync")
    def slurm_sync(self, request, name=None):
        """Queue a sync of this machine with Slurm now (operators); the link's state
        (``age_seconds``, ``last_error``) tells when it has run."""
        machine = self.get_object()
        slurm_sync.request_sync(machine)
        return Response(SlurmSyncQueuedSerializer(
            {"queued": True, "slurm": slurm.link_status(machine)}).data,
            status=status.HTTP_202_ACCEPTED)

    def get_serializer_class(self):
        if self.action == "retrieve":
            return MachineDetailSerializer
        if self.action == "partial_update":
            return MachineUpdateSerializer
        return MachineSerializer

    def perform_create(self, serializer):
        data = serializer.validated_data
        serializer.instance = machines.create_machine(
            name=data["name"], sides=data["sides"], concentration=data["concentration"],
            hostname_pattern=data.get("hostname_pattern", ""),
            hostlist=data.get("hostlist", ""), description=data.get("description", ""))

    def perform_update(self, serializer):
        serializer.instance = machines.update_machine(
            serializer.instance, description=serializer.validated_data.get(
                "description", serializer.instance.description))

    def perform_destroy(self, instance: Machine):
        machines.delete_machine(instance)


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

    def get_queryset(self):
        return queries.nodes_with_job(reader=self.request.user).order_by("machine__name",
                                                                         "index")

    @extend_schema(request=NodeRenameSerializer, responses=NodeSerializer)
    def partial_update(self, request, *args, **kwargs):
        node = self.get_object()
        rename = NodeRenameSerializer(data=request.data)
        rename.is_valid(raise_exception=True)
        machines.rename_node(node, rename.validated_data["hostname"])
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
        nodes = machines.set_node_state(data["machine"], data["hostlist"], data["state"],
                                        data.get("reason", ""), user=request.user)
        result = {"machine": data["machine"].name,
                  "hostlist": hostlists.compress(n.hostname for n in nodes),
                  "state": data["state"], "changed": len(nodes)}
        return Response(NodeStateChangeResultSerializer(result).data, status=status.HTTP_200_OK)
