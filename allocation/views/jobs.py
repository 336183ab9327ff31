"""Pages for jobs: list, detail with the partition drawn, submit, compare policies."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect
from django.views import View
from django.views.generic import DetailView, ListView

from allocation.filtersets import JobFilterSet
from allocation.forms import CompareForm, JobForm, ReleaseForm
from allocation.grid import candidate_grid, job_grid
from allocation.models import Job, Machine
from allocation.services import jobs, machines
from hxportal import ownership
from hxportal.errors import ConflictError
from hxportal.roles import Role
from hxportal.templatetags import hxformat
from hxportal.views import (
    FilteredListMixin,
    LiveFragmentMixin,
    OwnedRowsMixin,
    RoleRequiredMixin,
    ServiceFormView,
    add_form_errors,
)

HIGHER_IS_BETTER = {"pb_exact": True, "pb_bound": True, "avg_distance": False,
                    "max_distance": False, "hull_links": True}


class JobListView(RoleRequiredMixin, OwnedRowsMixin, FilteredListMixin, LiveFragmentMixin,
                  ListView):
    template_name = "allocation/job_list.html"
    live_template = "allocation/_job_list_fragment.html"
    context_object_name = "jobs"
    paginate_by = 50
    owner_field = "owner"
    filterset_class = JobFilterSet

    def get_queryset(self):
        return self.filtered(self.readable(Job.objects.select_related(
            "owner", "machine").order_by("-created_at", "-id")))


class JobDetailView(RoleRequiredMixin, OwnedRowsMixin, LiveFragmentMixin, DetailView):
    template_name = "allocation/job_detail.html"
    live_template = "allocation/_job_live.html"
    context_object_name = "job"
    queryset = Job.objects.select_related("owner", "machine")
    owner_field = "owner"

    #: A bound release form with errors, when a release was refused (shown in place).
    release_form: ReleaseForm | None = None

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        job = self.object
        context.update(grid=job_grid(job, request=self.request, reader=self.request.user),
                       hostlists=jobs.job_hostlists(job), properties=job.properties or {},
                       can_act=self._can_act(job),
                       release_form=self.release_form or ReleaseForm(),
                       has_benchmarks=job.benchmark_results.exists())
        return context

    def _can_act(self, job: Job) -> bool:
        return ownership.may_change(self.request.user, job.owner_id)


class JobReleaseView(RoleRequiredMixin, View):
    """Operators release their own jobs (admins any): completed, failed or cancelled,
    with the actual run time (it feeds predicted-against-actual)."""

    required_role = Role.OPERATOR

    def post(self, request, pk: int):
        job = get_object_or_404(ownership.writable(Job.objects.all(), request.user, "owner"),
                                pk=pk)
        form = ReleaseForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            try:
                jobs.finish_job(job, data["status"], data.get("actual_runtime"))
            except ConflictError as exc:  # finished meanwhile: the page no longer has the form
                messages.error(request, exc.message)
                return redirect(job)
            except ValidationError as exc:
                add_form_errors(form, exc)
            else:
                ran = (f" after {hxformat.seconds(data['actual_runtime'])}"
                       if data.get("actual_runtime") else "")
                messages.success(request, f"Job {job.pk} {data['status']}{ran}; nodes freed.")
                return redirect(job)
        # Refused: the job page again, the errors next to the release form's fields.
        page = JobDetailView(release_form=form)
        page.setup(request, pk=pk)
        page.object = page.get_object()
        return page.render_to_response(page.get_context_data(object=page.object))


class JobSubmitView(RoleRequiredMixin, ServiceFormView):
    required_role = Role.OPERATOR
    template_name = "allocation/job_form.html"
    form_class = JobForm

    def dispatch(self, request, *args, **kwargs):
        self.machine = get_object_or_404(Machine, name=kwargs["name"])
        return super().dispatch(request, *args, **kwargs)

    def get_context_data(self, **kwargs):
        return super().get_context_data(machine=self.machine, **kwargs)

    def get_initial(self):
        return {"policy": machines.default_policy()}

    def perform(self, form: JobForm) -> Job:
        return jobs.submit_job(owner=self.request.user, machine=self.machine,
                               **form.cleaned_data)

    def success_message(self, form: JobForm, job: Job) -> str:
        return f"Job {job.pk} allocated with {job.policy}."


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
        panels = [{"candidate": c, "grid": None if c.error else candidate_grid(
                       machine, c.hostnames, request=self.request,
                       testid=f"compare-grid-{c.policy}", compact=True)}
                  for c in candidates]
        context.update(panels=panels, best=_best_values(candidates),
                       legend_grid=next((p["grid"] for p in panels if p["grid"]), None),
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

