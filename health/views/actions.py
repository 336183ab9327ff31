"""What the health pages post: drain a suspect node, start an estimation, upload
benchmark times, keep a job's fastest nodes (the API's actions, as pages)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render, resolve_url
from django.urls import reverse
from django.views import View

from allocation.grid import candidate_grid
from allocation.models import Job, Machine
from allocation.services import queries
from health import services as health
from health.constants import DEFAULT_WINDOW_DAYS
from health.forms import (
    BenchmarkUploadForm,
    DrainForm,
    EstimationForm,
    RecordSelectionForm,
    SelectFastestForm,
)
from health.views.pages import MachineHealthView
from hxportal import hostlists, ownership
from hxportal.errors import ConflictError
from hxportal.roles import Role, role_at_least
from hxportal.text import pluralize
from hxportal.validators import uploaded_text
from hxportal.views import RoleRequiredMixin, ServiceFormView, add_form_errors


class DrainSuspectView(RoleRequiredMixin, View):
    """Drain a suspect node, the reason quoting its benchmark evidence: the first
    post shows what will happen (reason, jobs holding the node); the confirmed
    one drains."""

    required_role = Role.OPERATOR
    http_method_names = ["post"]

    def post(self, request, name: str):
        machine = get_object_or_404(Machine, name=name)
        form = DrainForm(request.POST)
        target = reverse("health:machine_health", args=[machine.name])
        if not form.is_valid():
            messages.error(request, "Nothing drained: the drain form was incomplete.")
            return redirect(target)
        data = form.cleaned_data
        window = data.get("window") or DEFAULT_WINDOW_DAYS
        try:
            if request.POST.get("confirmed") != "1":
                node, reason = health.drain_suspect_preview(
                    machine, data["hostname"], data.get("benchmark") or "", window)
                return render(request, "health/health_drain_confirm.html", {
                    "machine": machine, "node": node, "reason": reason, "window": window,
                    "benchmark": data.get("benchmark") or "", "back": target,
                    "impact": queries.state_change_impact([node])})
            node, reason = health.drain_suspect(machine, data["hostname"],
                                                data.get("benchmark") or "", window,
                                                user=request.user)
        except (ValidationError, ConflictError) as exc:
            messages.error(request, exc.message if isinstance(exc, ConflictError) else " ".join(
                m for ms in exc.message_dict.values() for m in ms))
            return redirect(target)
        messages.success(request, f"{node.hostname} drained ({reason}).")
        query = urlencode({"benchmark": data.get("benchmark") or "", "window": window})
        return redirect(f"{target}?{query}")


class StartEstimationView(RoleRequiredMixin, View):
    required_role = Role.OPERATOR
    http_method_names = ["post"]

    def post(self, request, name: str):
        machine = get_object_or_404(Machine, name=name)
        form = EstimationForm(request.POST)
        if form.is_valid():
            try:
                run = health.start_estimation(
                    machine, window_days=form.cleaned_data["window_days"],
                    benchmark=form.cleaned_data["benchmark"], user=request.user)
            except ValidationError as exc:
                add_form_errors(form, exc)
            else:
                messages.success(request, f"Estimation run {run.pk} queued.")
                return redirect("health:estimation_run", pk=run.pk)
        # Refused: the health page again, the errors next to the form's fields and the
        # submitted values kept (not a message at the top of a long page).
        page = MachineHealthView(estimation_form=form)
        page.setup(request, name=name)
        return page.render_to_response(page.get_context_data())


def upload_owner(user):
    """Whose jobs a page upload may write for: any (None) for admins, else one's own;
    the rule of ``POST /api/v1/benchmarks/``."""
    return None if role_at_least(user, Role.ADMIN) else user


class BenchmarkUploadView(RoleRequiredMixin, ServiceFormView):
    """Upload benchmark times from a CSV file or pasted CSV/JSON; each problem is
    listed with the row it is about, nothing is stored unless every row is valid.
    The page stays: the result (or the problems) below an empty (or the same) form."""

    required_role = Role.OPERATOR
    template_name = "health/benchmark_upload.html"
    form_class = BenchmarkUploadForm
    refusals = (ValidationError,)
    #: The refused upload's problems with the rows they are about, as a table.
    row_errors: list[tuple[str, str]] | None = None

    def perform(self, form: BenchmarkUploadForm) -> health.IngestResult:
        owner, user = upload_owner(self.request.user), self.request.user
        upload = form.cleaned_data.get("file")
        if upload is not None:
            return health.ingest_csv(uploaded_text(upload), owner=owner, user=user)
        text = form.cleaned_data["text"].strip()
        if text[:1] in "{[":
            return health.ingest_payload(_pasted_json(text), owner=owner, user=user)
        return health.ingest_csv(text, owner=owner, user=user)

    def show_refusal(self, form: BenchmarkUploadForm, exc: ValidationError) -> None:
        self.row_errors = _row_errors(exc, form)

    def get_context_data(self, **kwargs):
        return super().get_context_data(row_errors=self.row_errors, **kwargs)

    def success_message(self, form: BenchmarkUploadForm, result: health.IngestResult) -> str:
        replaced = f", replacing {result.replaced:,}" if result.replaced else ""
        return f"Stored {pluralize(result.stored, 'benchmark time')}{replaced}."

    def success_response(self, form: BenchmarkUploadForm, result: health.IngestResult):
        return self.render_to_response(self.get_context_data(
            form=BenchmarkUploadForm(), result=result))


def _pasted_json(text: str) -> Any:
    try:
        return json.loads(text, parse_constant=float)
    except ValueError as exc:
        raise ValidationError({"text": [f"not valid JSON: {exc}"]}) from exc


def _row_errors(exc: ValidationError, form) -> list[tuple[str, str]]:
    """Field problems go next to the form's fields; row problems into a table."""
    rows = []
    if not hasattr(exc, "error_dict"):
        form.add_error(None, exc.messages)
        return rows
    for key, problems in exc.message_dict.items():
        if key in form.fields:
            form.add_error(key, problems)
        else:
            rows.extend((key, p) for p in problems)
    return rows


class SelectFastestPageView(RoleRequiredMixin, ServiceFormView):
    """After a job's benchmark: keep its N fastest nodes, drop the rest. Everyone who may
    read the job previews; its owner (or an admin) records the roles, as with
    ``POST /api/v1/select-fastest/`` and ``record_roles``."""

    template_name = "health/select_fastest.html"
    form_class = SelectFastestForm
    http_method_names = ["get", "post", "head", "options"]
    refusals = (ValidationError,)

    def dispatch(self, request, *args, **kwargs):
        # Recording (POST) changes the job: only rows one may change, else 404 as the API.
        scope = ownership.writable if request.method == "POST" else ownership.readable
        self.job = get_object_or_404(scope(Job.objects.select_related("machine", "owner"),
                                           request.user, "owner"), pk=kwargs["pk"])
        self.benchmarks = health.job_benchmarks(self.job)
        return super().dispatch(request, *args, **kwargs)

    def get_form_class(self):
        return RecordSelectionForm if self.request.method == "POST" else SelectFastestForm

    def get_form_kwargs(self):
        kwargs = super().get_form_kwargs()
        if self.request.method == "GET" and self.request.GET.get("benchmark"):
            data = self.request.GET.copy()  # a preview is a GET with the form's values
            data.setdefault("n_node", str(self.job.node_count))
            kwargs["data"] = data
        return {**kwargs, "benchmarks": self.benchmarks}

    def get_initial(self):
        return {"n_node": self.job.node_count,
                "benchmark": self.benchmarks[0] if self.benchmarks else ""}

    def get(self, request, *args, **kwargs):
        form = self.get_form()
        if form.is_bound:
            return self.form_valid(form) if form.is_valid() else self.form_invalid(form)
        return self.render_to_response(self.get_context_data(form=form))

    def can_record(self) -> bool:
        return (role_at_least(self.request.user, Role.OPERATOR)
                and ownership.may_change(self.request.user, self.job.owner_id)
                and self.job.status in ("allocated", "running"))

    def get_context_data(self, **kwargs):
        return super().get_context_data(job=self.job, benchmarks=self.benchmarks,
                                        can_record=self.can_record(), **kwargs)

    def form_valid(self, form):
        if self.request.method == "POST" and not self.can_record():
            form.add_error(None, "Only the job's owner or an admin may record the selection, "
                                 "and only while the job holds its nodes.")
            return self.form_invalid(form)
        return super().form_valid(form)

    def perform(self, form: SelectFastestForm):
        """A GET previews (the page with the selection drawn); a POST records the roles,
        only if the selection is still the one the preview showed."""
        data = form.cleaned_data
        result = health.select_fastest(
            n_node=data["n_node"], job=self.job, benchmark=data["benchmark"],
            abnormal_threshold=data.get("abnormal_threshold"))
        if self.request.method != "POST":
            return self.preview(form, result)
        if (data.get("keep"), data.get("dropped")) != (result["keep"], result["dropped"]):
            form.add_error(None, "The benchmark results or node states changed since the "
                                 "preview: nothing was recorded. Check the selection below "
                                 "and record it again.")
            return self.preview(form, result, status=409)
        return health.record_selection(self.job, result["keep"], result["dropped"],
                                       allow_fewer=data.get("allow_fewer", False))

    def show_refusal(self, form: SelectFastestForm, exc: ValidationError) -> None:
        super().show_refusal(form, exc)
        self.refused = True

    def form_invalid(self, form):
        if self.request.method == "POST" and getattr(self, "refused", False):
            # A refused recording (e.g. fewer primaries than needed): the preview again,
            # with the reason, so the operator can confirm or change the selection.
            try:
                return self.preview(form, health.select_fastest(
                    n_node=form.cleaned_data["n_node"], job=self.job,
                    benchmark=form.cleaned_data["benchmark"],
                    abnormal_threshold=form.cleaned_data.get("abnormal_threshold")),
                    status=400)
            except ValidationError:
                pass
        return super().form_invalid(form)

    def success_message(self, form: SelectFastestForm, roles: dict[str, int]) -> str:
        return (f"Job {self.job.pk}: {pluralize(roles['primary'], 'primary node')}, "
                f"{roles['excluded']:,} excluded.")

    def get_success_url(self) -> str:
        return resolve_url(self.job)

    def preview(self, form: SelectFastestForm, result: dict, status: int = 200):
        keep = set(hostlists.expand(result["keep"]))
        abnormal = set(hostlists.expand(result["abnormal"])) | set(
            hostlists.expand(result["abnormal_kept"]))
        unavailable = set(hostlists.expand(result["unavailable"]))
        ignored = set(hostlists.expand(result["ignored"]))
        times = [{"hostname": host, "seconds": seconds, "kept": host in keep,
                  "abnormal": host in abnormal, "unavailable": host in unavailable,
                  "ratio": seconds / result["median"] if result["median"] else None}
                 for host, seconds in health.job_times(self.job, result["benchmark"])
                 if host not in ignored]
        grid = candidate_grid(
            self.job.machine, keep, excluded=set(hostlists.expand(result["dropped"])),
            request=self.request, testid="selection-grid", label="kept", own_job=self.job.pk)
        choice = {name: form.cleaned_data.get(name)
                  for name in ("benchmark", "n_node", "abnormal_threshold")}
        shown = form
        if isinstance(form, RecordSelectionForm):  # the preview form, without the record's
            shown = SelectFastestForm(initial=choice, benchmarks=self.benchmarks)
        record = RecordSelectionForm(initial={**choice, "keep": result["keep"],
                                              "dropped": result["dropped"]},
                                     benchmarks=self.benchmarks)
        record_errors = ([e for errors in form.errors.values() for e in errors]
                         if isinstance(form, RecordSelectionForm) else [])
        response = self.render_to_response(self.get_context_data(
            form=shown, result=result, times=times, grid=grid, record=record,
            record_errors=record_errors,
            needs_confirm=result["n_keep"] < self.job.node_count))
        response.status_code = status
        return response
