"""Pages for jobs: list, detail with the partition drawn, submit, compare policies."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect
from django.views import View
from django.views.generic import DetailView, FormView, ListView

from allocation import jobs, queries
from allocation.filtersets import JobFilterSet
from allocation.forms import CompareForm, JobForm, ReleaseForm
from allocation.grid import GridShape, build_plane
from allocation.models import Job, Machine
from hxportal import ownership
from hxportal.errors import ConflictError
from hxportal.roles import Role
from hxportal.views import OwnedRowsMixin, RoleRequiredMixin, add_form_errors

HIGHER_IS_BETTER = {"pb_exact": True, "pb_bound": True, "avg_distance": False,
                    "max_distance": False, "hull_links": True}


class JobListView(RoleRequiredMixin, OwnedRowsMixin, ListView):
    template_name = "allocation/job_list.html"
    context_object_name = "jobs"
    paginate_by = 50
    owner_field = "owner"

    def get_queryset(self):
        data = self.request.GET.copy()
        data.pop("page", None)
        self.filterset = JobFilterSet(data, queryset=self.readable(Job.objects.select_related(
            "owner", "machine").order_by("-created_at", "-id")))
        return self.filterset.qs if self.filterset.is_valid() else Job.objects.none()

    def get_context_data(self, **kwargs):
        return super().get_context_data(filterset=self.filterset, **kwargs)


class JobDetailView(RoleRequiredMixin, OwnedRowsMixin, DetailView):
    template_name = "allocation/job_detail.html"
    context_object_name = "job"
    queryset = Job.objects.select_related("owner", "machine")
    owner_field = "owner"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        job = self.object
        machine = job.machine
        shape = GridShape(tuple(machine.sides))
        held = set(job.allocations.values_list("node__switch", flat=True))
        plane = min(held) // shape.plane_size if held else 0
        start, end = shape.switch_range(plane)
        roles = dict(job.allocations.filter(node__switch__gte=start, node__switch__lt=end)
                     .values_list("node_id", "role"))
        nodes = list(machine.nodes.filter(switch__gte=start, switch__lt=end).values(
            "id", "switch", "coords", "local", "hostname", "state"))
        for node in nodes:
            node["mark"] = roles.get(node["id"], "")
        context.update(grid=build_plane(shape, plane, nodes), shape=shape,
                       hostlists=jobs.job_hostlists(job), plane=plane,
                       properties=job.properties or {},
                       can_act=self._can_act(job), release_form=ReleaseForm())
        return context

    def _can_act(self, job: Job) -> bool:
        return ownership.may_change(self.request.user, job.owner_id)


class JobReleaseView(RoleRequiredMixin, View):
    """Operators release their own jobs (admins any): completed, failed or cancelled."""

    required_role = Role.OPERATOR

    def post(self, request, pk: int):
        job = get_object_or_404(ownership.writable(Job.objects.all(), request.user, "owner"),
                                pk=pk)
        form = ReleaseForm(request.POST)
        if not form.is_valid():
            messages.error(request, "; ".join(e for errs in form.errors.values() for e in errs))
            return redirect(job)
        try:
            jobs.finish_job(job, form.cleaned_data["status"])
        except (ValidationError, ConflictError) as exc:
            messages.error(request, getattr(exc, "message", None) or "; ".join(exc.messages))
            return redirect(job)
        messages.success(request, f"Job {job.pk} {form.cleaned_data['status']}; nodes freed.")
        return redirect(job)


class JobSubmitView(RoleRequiredMixin, FormView):
    required_role = Role.OPERATOR
    template_name = "allocation/job_form.html"
    form_class = JobForm

    def dispatch(self, request, *args, **kwargs):
        self.machine = get_object_or_404(Machine, name=kwargs["name"])
        return super().dispatch(request, *args, **kwargs)

    def get_context_data(self, **kwargs):
        return super().get_context_data(machine=self.machine, **kwargs)

    def form_valid(self, form):
        data = form.cleaned_data
        try:
            job = jobs.submit_job(owner=self.request.user, machine=self.machine, **data)
        except (ValidationError, ConflictError) as exc:
            add_form_errors(form, exc)
            return self.form_invalid(form)
        messages.success(self.request, f"Job {job.pk} allocated with {job.policy}.")
        return redirect(job)


class ComparePoliciesView(RoleRequiredMixin, DetailView):
    """Each policy's candidate for a size on the live occupancy, side by side."""

    template_name = "allocation/compare.html"
    slug_field = "name"
    slug_url_kwarg = "name"
    context_object_name = "machine"
    queryset = Machine.objects.all()

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        machine = self.object
        form = CompareForm(self.request.GET or None, initial={"size": machine.concentration**2})
        context["form"] = form
        if not form.is_valid():
            return context
        try:
            candidates = jobs.compare_policies(machine, form.cleaned_data["size"],
                                               form.cleaned_data["seed"])
        except ValidationError as exc:
            add_form_errors(form, exc)
            return context
        shape = GridShape(tuple(machine.sides))
        start, end = shape.switch_range(0)
        base = list(machine.nodes.filter(switch__gte=start, switch__lt=end).values(
            "index", "switch", "coords", "local", "hostname", "state"))
        busy = set(queries.held_node_indices(machine))
        panels = []
        for candidate in candidates:
            chosen = set(candidate.endpoints)
            nodes = [{**n, "mark": "chosen" if n["index"] in chosen else (
                "busy" if n["index"] in busy else "")} for n in base]
            panels.append({"candidate": candidate, "grid": build_plane(shape, 0, nodes)})
        context.update(panels=panels, best=_best_values(candidates), shape=shape,
                       metrics=list(HIGHER_IS_BETTER))
        return context


def _best_values(candidates) -> dict[str, float]:
    best: dict[str, float] = {}
    for metric, higher in HIGHER_IS_BETTER.items():
        values = [c.properties[metric] for c in candidates
                  if c.properties and c.properties.get(metric) is not None]
        if values:
            best[metric] = max(values) if higher else min(values)
    return best

