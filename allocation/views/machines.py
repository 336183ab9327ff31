"""Pages for machines and nodes. Thin: queries in ``queries``, writes in ``services``."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect
from django.views.generic import DetailView, FormView, ListView

from allocation.filtersets import NodeFilterSet
from allocation.forms import MachineForm, NodeStateForm, SiteSettingsForm
from allocation.grid import machine_grid
from allocation.models import Machine
from allocation.services import machines, queries
from hxportal import hostlists
from hxportal.errors import ConflictError
from hxportal.roles import Role
from hxportal.views import RoleRequiredMixin, add_form_errors


class MachineCreateView(RoleRequiredMixin, FormView):
    required_role = Role.ADMIN
    template_name = "allocation/machine_form.html"
    form_class = MachineForm

    def form_valid(self, form):
        try:
            machine = machines.create_machine(**form.cleaned_data)
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
        grid = machine_grid(machine, request=self.request, reader=self.request.user,
                            plane=self.request.GET.get("plane"))
        context.update(grid=grid, state_hostlists=queries.state_hostlists(machine),
                       state_form=NodeStateForm())
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
    """Drain, down or bring up nodes by hostlist, in two steps: the form (with a
    reason), then a confirmation page listing the nodes and the jobs holding any."""

    required_role = Role.OPERATOR
    form_class = NodeStateForm
    template_name = "allocation/node_state.html"

    def dispatch(self, request, *args, **kwargs):
        self.machine = get_object_or_404(Machine, name=kwargs["name"])
        return super().dispatch(request, *args, **kwargs)

    def get_initial(self):
        return {key: self.request.GET[key] for key in ("hostlist", "state", "reason")
                if key in self.request.GET}

    def get_context_data(self, **kwargs):
        return super().get_context_data(machine=self.machine, **kwargs)

    def form_valid(self, form):
        data = form.cleaned_data
        try:
            if self.request.POST.get("confirmed") != "1":
                nodes = machines.check_node_state(self.machine, data["hostlist"],
                                                  data["state"], data["reason"])
                return self.render_to_response(self.get_context_data(
                    form=form, confirm=queries.state_change_impact(nodes)))
            nodes = machines.set_node_state(self.machine, data["hostlist"], data["state"],
                                            data["reason"])
        except ValidationError as exc:
            add_form_errors(form, exc)
            return self.form_invalid(form)
        messages.success(self.request, f"{hostlists.compress(n.hostname for n in nodes)} "
                                       f"set to {data['state']}.")
        return redirect(self.machine)


class SiteSettingsView(RoleRequiredMixin, FormView):
    """Admins: the site's default policy, stored in the database; blank falls back to
    the ``HX_DEFAULT_POLICY`` environment setting."""

    required_role = Role.ADMIN
    template_name = "allocation/site_settings.html"
    form_class = SiteSettingsForm

    def get_form_kwargs(self):
        return {**super().get_form_kwargs(), "env_default": settings.HX_DEFAULT_POLICY}

    def get_initial(self):
        return {"default_policy": machines.site_settings().default_policy}

    def get_context_data(self, **kwargs):
        return super().get_context_data(
            row=machines.site_settings(), effective=machines.default_policy(),
            env_default=settings.HX_DEFAULT_POLICY, **kwargs)

    def form_valid(self, form):
        try:
            row = machines.set_site_settings(
                default_policy=form.cleaned_data["default_policy"], user=self.request.user)
        except ValidationError as exc:
            add_form_errors(form, exc)
            return self.form_invalid(form)
        source = "the site setting" if row.default_policy else "HX_DEFAULT_POLICY"
        messages.success(self.request, f"Default policy: {machines.default_policy()} "
                                       f"(from {source}).")
        return redirect("allocation:site_settings")
