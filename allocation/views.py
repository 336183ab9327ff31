"""Pages for machines and nodes. Thin: queries in ``queries``, writes in ``services``."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect
from django.views.generic import DetailView, FormView, ListView, TemplateView

from allocation import glossary, overview, queries, services
from allocation.filtersets import NodeFilterSet
from allocation.forms import MachineForm, NodeStateForm
from allocation.grid import GridShape, build_plane, job_palette
from allocation.models import Machine, NodeState
from allocation.models.benchmarks import DEFAULT_WINDOW_DAYS
from hxportal import hostlists, ownership
from hxportal.errors import ConflictError
from hxportal.roles import Role
from hxportal.views import RoleRequiredMixin, add_form_errors


class OverviewView(RoleRequiredMixin, TemplateView):
    """The home page: one card per machine (occupancy, jobs, health, estimate,
    failures) and the site's simulations; a fixed number of queries."""

    template_name = "allocation/overview.html"

    def get_context_data(self, **kwargs):
        user = self.request.user
        return super().get_context_data(
            summaries=overview.machine_summaries(user), activity=overview.site_activity(user),
            window_days=DEFAULT_WINDOW_DAYS, **kwargs)


class GlossaryView(RoleRequiredMixin, TemplateView):
    template_name = "glossary.html"

    def get_context_data(self, **kwargs):
        return super().get_context_data(sections=glossary.sections(), **kwargs)


class MachineCreateView(RoleRequiredMixin, FormView):
    required_role = Role.ADMIN
    template_name = "allocation/machine_form.html"
    form_class = MachineForm

    def form_valid(self, form):
        try:
            machine = services.create_machine(**form.cleaned_data)
        except (ValidationError, ConflictError) as exc:
            add_form_errors(form, exc)
            return self.form_invalid(form)
        messages.success(self.request, f"Created {machine.name} with {machine.node_count} nodes.")
        return redirect(machine)


class MachineDetailView(RoleRequiredMixin, DetailView):
    template_name = "allocation/machine_detail.html"
    slug_field = "name"
    slug_url_kwarg = "name"
    context_object_name = "machine"
    queryset = Machine.objects.all()

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        machine = self.object
        shape = GridShape(tuple(machine.sides))
        try:
            plane = min(max(int(self.request.GET.get("plane", 0)), 0), shape.planes - 1)
        except ValueError:
            plane = 0
        start, end = shape.switch_range(plane)
        nodes = list(queries.nodes_with_job(machine.nodes.filter(
            switch__gte=start, switch__lt=end)).values(
            "switch", "coords", "local", "hostname", "state", "state_reason", "job"))
        active = list(queries.active_jobs(machine))
        palette = job_palette(j.pk for j in active)
        # With HX_PRIVATE_DATA, another user's job shows as held, without name or link.
        everything = ownership.reads_everything(self.request.user)
        shown = [j for j in active if everything or j.owner_id == self.request.user.pk]
        names = {j.pk: j.name for j in shown}
        for node in nodes:
            node["colour"] = palette.get(node["job"])
            node["job_shown"] = node["job"] in names
            node["job_name"] = names.get(node["job"], "held by another user")
        state_hostlists = {
            state: hostlists.compress(machine.nodes.filter(state=state)
                                      .values_list("hostname", flat=True))
            for state in NodeState.values}
        context.update(
            grid=build_plane(shape, plane, nodes), shape=shape, plane=plane,
            plane_labels=list(enumerate(shape.plane_labels())),
            state_hostlists=state_hostlists, state_form=NodeStateForm(),
            legend=[{"job": j, "colour": palette[j.pk]} for j in shown],
            hidden_jobs=len(active) - len(shown))
        return context


class NodeListView(RoleRequiredMixin, ListView):
    template_name = "allocation/node_list.html"
    context_object_name = "nodes"
    paginate_by = 100

    def get_queryset(self):
        self.machine = get_object_or_404(Machine, name=self.kwargs["name"])
        data = self.request.GET.copy()
        data["machine"] = self.machine.name
        data.pop("page", None)
        self.filterset = NodeFilterSet(data, queryset=queries.nodes_with_job(
            self.machine.nodes.all(), reader=self.request.user))
        if not self.filterset.is_valid():
            return self.machine.nodes.none()
        return self.filterset.qs.order_by("index")

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        names = self.object_list.values_list("hostname", flat=True)
        context.update(machine=self.machine, filterset=self.filterset,
                       matched_hostlist=hostlists.compress(names[:100_000]))
        return context


class NodeStateView(RoleRequiredMixin, FormView):
    required_role = Role.OPERATOR
    form_class = NodeStateForm
    template_name = "allocation/node_state.html"

    def dispatch(self, request, *args, **kwargs):
        self.machine = get_object_or_404(Machine, name=kwargs["name"])
        return super().dispatch(request, *args, **kwargs)

    def get_context_data(self, **kwargs):
        return super().get_context_data(machine=self.machine, **kwargs)

    def form_valid(self, form):
        data = form.cleaned_data
        try:
            nodes = services.set_node_state(self.machine, data["hostlist"], data["state"],
                                            data["reason"])
        except ValidationError as exc:
            add_form_errors(form, exc)
            return self.form_invalid(form)
        messages.success(self.request, f"{hostlists.compress(n.hostname for n in nodes)} "
                                       f"set to {data['state']}.")
        return redirect(self.machine)
