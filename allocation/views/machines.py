"""Pages for machines and nodes. Thin: queries in ``queries``, writes in ``services``."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, resolve_url
from django.urls import reverse_lazy
from django.views import View
from django.views.generic import DetailView, ListView

from allocation.filtersets import NodeFilterSet
from allocation.forms import MachineForm, NodeStateForm, SiteSettingsForm
from allocation.grid import machine_grid
from allocation.models import Machine
from allocation.services import machines, queries, slurm, slurm_sync
from hxportal import hostlists
from hxportal.roles import Role
from hxportal.views import (
    FilteredListMixin,
    LiveFragmentMixin,
    RoleRequiredMixin,
    ServiceFormView,
)


class MachineCreateView(RoleRequiredMixin, ServiceFormView):
    required_role = Role.ADMIN
    template_name = "allocation/machine_form.html"
    form_class = MachineForm

    def perform(self, form: MachineForm) -> Machine:
        return machines.create_machine(**form.cleaned_data)

    def success_message(self, form: MachineForm, machine: Machine) -> str:
        return f"Created {machine.name} with {machine.node_count} nodes."


class MachineDetailView(RoleRequiredMixin, LiveFragmentMixin, DetailView):
    template_name = "allocation/machine_detail.html"
    live_template = "allocation/_machine_live_fragment.html"
    slug_field = "name"
    slug_url_kwarg = "name"
    context_object_name = "machine"
    queryset = Machine.objects.all()

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        machine = self.object
        grid = machine_grid(machine, request=self.request, reader=self.request.user,
                            plane=self.request.GET.get("plane"))
        context.update(grid=grid, state_hostlists=queries.state_hostlists(machine),
                       state_form=NodeStateForm(), slurm=slurm.link_status(machine))
        return context


class SlurmSyncView(RoleRequiredMixin, View):
    """Operators ask for a sync with Slurm now; a worker runs it and the machine page
    shows its outcome (last synced, last error)."""

    required_role = Role.OPERATOR

    def post(self, request, name: str):
        machine = get_object_or_404(Machine, name=name)
        slurm_sync.request_sync(machine)
        messages.success(request, f"Sync of {machine.name} with Slurm queued; this page shows "
                                  "when it has run.")
        return redirect(machine)


class NodeListView(RoleRequiredMixin, FilteredListMixin, ListView):
    template_name = "allocation/node_list.html"
    context_object_name = "nodes"
    paginate_by = 100
    filterset_class = NodeFilterSet

    def get_queryset(self):
        self.machine = get_object_or_404(Machine, name=self.kwargs["name"])
        return self.filtered(queries.nodes_with_job(
            self.machine.nodes.all(), reader=self.request.user).order_by("index"),
            machine=self.machine.name)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        names = self.object_list.values_list("hostname", flat=True)
        context.update(machine=self.machine,
                       matched_hostlist=hostlists.compress(names[:100_000]))
        return context


class NodeStateView(RoleRequiredMixin, ServiceFormView):
    """Drain, down or bring up nodes by hostlist, in two steps: the form (with a
    reason), then a confirmation page listing the nodes and the jobs holding any."""

    required_role = Role.OPERATOR
    form_class = NodeStateForm
    template_name = "allocation/node_state.html"
    refusals = (ValidationError,)

    def dispatch(self, request, *args, **kwargs):
        self.machine = get_object_or_404(Machine, name=kwargs["name"])
        return super().dispatch(request, *args, **kwargs)

    def get_initial(self):
        return {key: self.request.GET[key] for key in ("hostlist", "state", "reason")
                if key in self.request.GET}

    def get_context_data(self, **kwargs):
        return super().get_context_data(machine=self.machine, **kwargs)

    def perform(self, form: NodeStateForm):
        data = form.cleaned_data
        if self.request.POST.get("confirmed") != "1":
            nodes = machines.check_node_state(self.machine, data["hostlist"], data["state"],
                                              data["reason"])
            return self.render_to_response(self.get_context_data(
                form=form, confirm=queries.state_change_impact(nodes)))
        return machines.set_node_state(self.machine, data["hostlist"], data["state"],
                                       data["reason"], user=self.request.user)

    def success_message(self, form: NodeStateForm, nodes) -> str:
        return (f"{hostlists.compress(n.hostname for n in nodes)} "
                f"set to {form.cleaned_data['state']}.")

    def get_success_url(self) -> str:
        return resolve_url(self.machine)


class SiteSettingsView(RoleRequiredMixin, ServiceFormView):
    """Admins: the site's default policy, stored in the database; blank falls back to
    the ``HX_DEFAULT_POLICY`` environment setting."""

    required_role = Role.ADMIN
    template_name = "allocation/site_settings.html"
    form_class = SiteSettingsForm
    refusals = (ValidationError,)
    success_url = reverse_lazy("allocation:site_settings")

    def get_form_kwargs(self):
        return {**super().get_form_kwargs(), "env_default": settings.HX_DEFAULT_POLICY}

    def get_initial(self):
        return {"default_policy": machines.site_settings().default_policy}

    def get_context_data(self, **kwargs):
        return super().get_context_data(
            row=machines.site_settings(), effective=machines.default_policy(),
            env_default=settings.HX_DEFAULT_POLICY, **kwargs)

    def perform(self, form: SiteSettingsForm):
        return machines.set_site_settings(default_policy=form.cleaned_data["default_policy"],
                                          user=self.request.user)

    def success_message(self, form: SiteSettingsForm, row) -> str:
        source = "the site setting" if row.default_policy else "HX_DEFAULT_POLICY"
        return f"Default policy: {machines.default_policy()} (from {source})."
