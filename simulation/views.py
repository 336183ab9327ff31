"""Pages for simulation runs and sweeps. Thin: writes and results in ``services``,
drawing in ``charts``; the progress scripts poll the API (static JS, no inline code)."""

from __future__ import annotations

import csv
import json

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render, resolve_url
from django.views import View
from django.views.generic import DetailView, ListView

from hxportal import ownership
from hxportal.errors import ConflictError
from hxportal.roles import Role
from hxportal.text import pluralize
from hxportal.views import (
    FilteredListMixin,
    OwnedRowActionView,
    OwnedRowsMixin,
    RoleRequiredMixin,
    ServiceFormView,
)
from simulation import charts, reproduction_report, services
from simulation.filtersets import SimulationRunPageFilterSet, SweepFilterSet
from simulation.forms import RunForm, StudyForm, SweepForm
from simulation.models import RunOrigin, SimulationRun, Sweep
from simulation.presets import BASELINE_POLICY

MAX_TABLE_ROWS = 500


def _form_errors(form, exc: ValidationError | ConflictError, default: str | None = None) -> None:
    """A service names configuration fields by path ("traffic.rate"): the error goes
    next to the form field of the last part, else next to ``default``, prefixed with
    the path whenever it is not the field's own name."""
    if isinstance(exc, ConflictError):
        form.add_error(None, exc.message)
        return
    for field, problems in exc.message_dict.items():
        leaf = field.split(".")[-1]
        if leaf in form.fields:
            name, prefix = leaf, ("" if leaf == field else f"{field}: ")
        else:
            name, prefix = (default if default in form.fields else None), f"{field}: "
        form.add_error(name, [f"{prefix}{p}" for p in problems])


class SimulationFormView(ServiceFormView):
    """Simulation forms: a refusal about a field the form lacks shows next to
    ``fallback_field`` (the free-form configuration, or the study's scale)."""

    fallback_field: str | None = None

    def show_refusal(self, form, exc: ValidationError | ConflictError) -> None:
        _form_errors(form, exc, default=self.fallback_field)


def labelled_apps(apps: list[dict]) -> list[dict]:
    """The result's applications as the page names them: "replica 1".."replica k" for
    the copies of the application (all have the role "app"), "background" for the
    background traffic."""
    out, replica = [], 0
    for app in apps:
        if app.get("role") == "background":
            label = "background"
        else:
            replica += 1
            label = f"replica {replica}"
        out.append({**app, "label": label})
    return out


def labelled(progress: dict) -> dict:
    """A sweep's progress with its status in words ("running (3 of 8 done)")."""
    return {**progress, "label": services.sweep_status_text(progress)}


class RunListView(RoleRequiredMixin, OwnedRowsMixin, FilteredListMixin, ListView):
    template_name = "simulation/run_list.html"
    context_object_name = "runs"
    paginate_by = 50
    filterset_class = SimulationRunPageFilterSet

    def get_queryset(self):
        return self.filtered(self.readable(
            SimulationRun.objects.select_related("user", "sweep").defer("result", "log")
            .order_by("-created_at", "-id")), defaults={"origin": RunOrigin.SUBMITTED})

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        runs = context["runs"]
        context.update(active=any(not r.is_terminal for r in runs),
                       descriptions={r.pk: services.describe(r.config) for r in runs})
        return context


class RunCreateView(RoleRequiredMixin, SimulationFormView):
    required_role = Role.OPERATOR
    template_name = "simulation/run_form.html"
    form_class = RunForm
    fallback_field = "extra"

    def perform(self, form: RunForm) -> SimulationRun:
        return services.start_run(form.config(), user=self.request.user,
                                  machine=form.cleaned_data.get("machine"))

    def success_message(self, form: RunForm, run: SimulationRun) -> str:
        return f"Started simulation {run.pk}."


class RunDetailView(RoleRequiredMixin, OwnedRowsMixin, DetailView):
    template_name = "simulation/run_detail.html"
    context_object_name = "run"
    queryset = SimulationRun.objects.select_related("user", "sweep", "machine")

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        run = self.object
        result = run.result or {}
        context.update(
            description=services.describe(run.config),
            config_json=json.dumps(run.config, indent=2),
            heatmap=charts.heatmap(result) if result else None,
            can_change=ownership.may_change(self.request.user, run.user_id),
            confirm_delete=self.request.GET.get("delete") == "1",
            apps=labelled_apps(result.get("apps") or []),
            summary=run.summary or {})
        return context


class SweepListView(RoleRequiredMixin, OwnedRowsMixin, FilteredListMixin, ListView):
    template_name = "simulation/sweep_list.html"
    context_object_name = "sweeps"
    paginate_by = 50
    filterset_class = SweepFilterSet

    def get_queryset(self):
        return self.filtered(services.with_counts(self.readable(
            Sweep.objects.select_related("user"))).order_by("-created_at", "-id"))

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["progress"] = {s.pk: labelled(services.sweep_progress(s))
                               for s in context["sweeps"]}
        context["active"] = any(p["status"] in ("pending", "running")
                                for p in context["progress"].values())
        return context


class SweepCreateView(RoleRequiredMixin, SimulationFormView):
    required_role = Role.OPERATOR
    template_name = "simulation/sweep_form.html"
    form_class = SweepForm
    fallback_field = "base"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context.setdefault("study_form", StudyForm())
        context["study_size"] = services.study_size()
        return context

    def perform(self, form: SweepForm) -> Sweep:
        return services.create_sweep(name=form.cleaned_data["name"],
                                     base=form.cleaned_data["base"],
                                     parameters=form.parameters(), user=self.request.user)

    def success_message(self, form: SweepForm, sweep: Sweep) -> str:
        return f"Started sweep {sweep.pk} with {sweep.run_count} runs."


class StudyCreateView(RoleRequiredMixin, SimulationFormView):
    """One click: the reference study on the 8x8, c = 8 machine."""

    required_role = Role.OPERATOR
    template_name = "simulation/sweep_form.html"
    form_class = StudyForm
    refusals = (ValidationError,)
    fallback_field = "scale"

    def get(self, request, *args, **kwargs):
        return redirect("simulation:sweep_create")

    def form_invalid(self, form):
        return self.render_to_response({"form": SweepForm(), "study_form": form,
                                        "study_size": services.study_size()}, status=400)

    def perform(self, form: StudyForm) -> Sweep:
        return services.start_study(user=self.request.user, scale=form.cleaned_data["scale"],
                                    name=form.cleaned_data["name"])

    def success_message(self, form: StudyForm, sweep: Sweep) -> str:
        return f"Started the reference study: {sweep.run_count} runs."


class SweepDetailView(RoleRequiredMixin, OwnedRowsMixin, DetailView):
    template_name = "simulation/sweep_detail.html"
    context_object_name = "sweep"
    queryset = Sweep.objects.select_related("user")

    def _pick(self, name: str, options: list, default=None):
        raw = self.request.GET.get(name)
        for option in options:
            if raw is not None and str(option) == raw:
                return option
        return default if default in options else (options[0] if options else None)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        sweep = self.object
        rows = services.sweep_rows(sweep)
        options = charts.choices(rows)
        policies = options.get("policy", [])
        sel = {key: self._pick(key, options.get(key, []))
               for key in ("routing", "vc_sets", "ranks", "pattern")}
        baseline = self._pick("baseline", policies,
                              BASELINE_POLICY if BASELINE_POLICY in policies else None)
        common = {k: sel[k] for k in ("routing", "vc_sets")}
        line = charts.escalation_chart(
            charts.escalation_series(charts.select(rows, **common, ranks=sel["ranks"],
                                                   pattern=sel["pattern"])))
        groups, series = charts.interference_groups(
            charts.select(rows, **common, ranks=sel["ranks"]), policies)
        bars = charts.interference_chart(groups, series)
        columns, table = charts.normalised_table(charts.select(rows, **common), baseline)
        context.update(
            progress=labelled(services.sweep_progress(sweep)), rows=rows[:MAX_TABLE_ROWS],
            rows_truncated=len(rows) > MAX_TABLE_ROWS, options=options, selected=sel,
            baseline=baseline, policies=policies,
            escalation_chart=line, interference_chart=bars,
            can_change=ownership.may_change(self.request.user, sweep.user_id),
            confirm_delete=self.request.GET.get("delete") == "1",
            norm_columns=columns, norm_table=table[:MAX_TABLE_ROWS])
        return context


def _readable_sweep(request, pk: int) -> Sweep:
    return get_object_or_404(ownership.readable(Sweep.objects.all(), request.user, "user"),
                             pk=pk)


class SweepResultsCSVView(RoleRequiredMixin, View):
    def get(self, request, pk: int):
        sweep = _readable_sweep(request, pk)
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="sweep-{sweep.pk}.csv"'
        writer = csv.DictWriter(response, fieldnames=services.RESULT_COLUMNS)
        writer.writeheader()
        for row in services.sweep_rows(sweep):
            writer.writerow(row)
        return response


class SweepResultsJSONView(RoleRequiredMixin, View):
    def get(self, request, pk: int):
        sweep = _readable_sweep(request, pk)
        body = {"sweep": sweep.pk, "name": sweep.name, "preset": sweep.preset,
                "base": sweep.base, "parameters": sweep.parameters,
                "progress": services.sweep_progress(sweep),
                "results": services.sweep_rows(sweep)}
        response = JsonResponse(body)
        response["Content-Disposition"] = f'attachment; filename="sweep-{sweep.pk}.json"'
        return response


class ReproductionView(RoleRequiredMixin, View):
    """The engine next to the published study: the latest finished reproduction sweep
    (or the stored reference while none has finished), or ``?sweep=<id>`` (404 if not a
    readable reproduction sweep)."""

    def get(self, request):
        shown = reproduction_report.page_choice(request.user, request.GET.get("sweep"))
        return render(request, "simulation/reproduction.html", {
            **shown,
            "others": list(reproduction_report.sweeps(request.user)[:10]),
            "source": reproduction_report.published()["source"],
            "engine_version": services.ENGINE_VERSION,
            "placement_version": services.PLACEMENT_VERSION,
            **reproduction_report.start_info()})


class ReproductionStartView(RoleRequiredMixin, View):
    """The start button of the reproduction page (``seeds`` 1..8, ``ordering_seeds``
    1..32 or blank for the same as ``seeds``)."""

    required_role = Role.OPERATOR

    def get(self, request):
        return redirect("simulation:reproduction")

    def post(self, request):
        raw = request.POST.get("seeds", "").strip()
        raw_ordering = request.POST.get("ordering_seeds", "").strip()
        try:
            if not raw:
                raise ValidationError({"seeds": [
                    f"required: an integer in 1..{reproduction_report.MAX_SEEDS}"]})
            sweep = services.start_reproduction(
                request.user, seeds=_integer_or_text(raw),
                ordering_seeds=_integer_or_text(raw_ordering) if raw_ordering else None)
        except ValidationError as exc:
            for field, problems in exc.message_dict.items():
                messages.error(request, f"{field}: {'; '.join(problems)}")
            return redirect("simulation:reproduction")
        messages.success(request, f"Started reproduction sweep {sweep.pk}: "
                                  f"{sweep.run_count} runs.")
        return redirect(f"{resolve_url('simulation:reproduction')}?sweep={sweep.pk}")


def _integer_or_text(raw: str) -> int | str:
    """A form field as the integer it spells, else as given (the service names it)."""
    return int(raw) if raw.isdecimal() else raw


# --------------------------------------------------------------------------
# Cancel and delete (the API's cancel and destroy, as pages)


class RunCancelView(OwnedRowActionView):
    http_method_names = ["post"]
    model = SimulationRun
    service = staticmethod(services.cancel_run)
    done = "Simulation {pk} cancelled."


class RunDeleteView(OwnedRowActionView):
    """Delete a finished run; the run page asks for confirmation first (``?delete=1``)."""

    http_method_names = ["post"]
    model = SimulationRun
    service = staticmethod(services.delete_run)
    done = "Simulation {pk} deleted."
    success_url = "simulation:run_list"


class SweepCancelView(OwnedRowActionView):
    http_method_names = ["post"]
    model = Sweep
    service = staticmethod(services.cancel_sweep)
    nothing = "Sweep {pk} has no unfinished runs to cancel."

    def message(self, pk: int, result: int) -> str:
        return f"Sweep {pk}: {pluralize(result, 'unfinished run')} cancelled."


class SweepDeleteView(OwnedRowActionView):
    """Delete a sweep and its runs; the sweep page asks for confirmation first."""

    http_method_names = ["post"]
    model = Sweep
    service = staticmethod(services.delete_sweep)
    done = "Sweep {pk} and its runs deleted."
    success_url = "simulation:sweep_list"
