"""Node-health and spare-calculator pages. Thin: ``health.services`` computes and writes."""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views import View
from django.views.generic import DetailView, FormView, TemplateView

from allocation.grid import candidate_grid, health_grid
from allocation.models import Job, Machine, Node
from allocation.services import queries
from health import services as health
from health.constants import DEFAULT_WINDOW_DAYS
from health.forms import (
    BenchmarkUploadForm,
    DrainForm,
    EstimationForm,
    HealthFilterForm,
    SelectFastestForm,
    SparesForm,
)
from health.models import Estimate, EstimationRun
from hxportal import charts, hostlists, ownership
from hxportal.roles import Role, role_at_least
from hxportal.templatetags import hxformat as fmt
from hxportal.views import RoleRequiredMixin, add_form_errors

ESTIMATES_PER_CHART = 100


def _median(values: list[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    m = len(ordered)
    return 0.5 * (ordered[(m - 1) // 2] + ordered[m // 2])


class HealthIndexView(RoleRequiredMixin, TemplateView):
    template_name = "health/health_index.html"

    def get_context_data(self, **kwargs):
        latest: dict[int, dict[str, Estimate]] = defaultdict(dict)
        for estimate in Estimate.objects.order_by("machine_id", "benchmark", "-created_at"):
            latest[estimate.machine_id].setdefault(estimate.benchmark, estimate)
        machines = [(m, sorted(latest[m.pk].values(), key=lambda e: e.benchmark))
                    for m in Machine.objects.order_by("name")]
        return super().get_context_data(machines=machines, **kwargs)


class MachineHealthView(RoleRequiredMixin, TemplateView):
    """The switch grid by suspicion, latest times, drain candidates and estimates over time."""

    template_name = "health/health_machine.html"
    #: A bound estimation form with errors, when a start was refused (shown in place).
    estimation_form: EstimationForm | None = None

    def get_context_data(self, **kwargs):
        machine = get_object_or_404(Machine, name=self.kwargs["name"])
        form = HealthFilterForm(self.request.GET or None,
                                benchmarks=health.benchmarks_of(machine))
        choice = form.cleaned_data if form.is_bound and form.is_valid() else {}
        window = choice.get("window") or DEFAULT_WINDOW_DAYS
        state = health.machine_health(machine, choice.get("benchmark") or "", window,
                                      reader=self.request.user)
        levels = {name: (health.suspicion_level(item),
                         f"{item.abnormal_runs}/{item.runs} {state.benchmark} runs abnormal,"
                         f" score {item.score:.2f}") for name, item in state.by_node.items()}
        query = urlencode({"benchmark": state.benchmark, "window": window})
        grid = health_grid(
            machine, levels, request=self.request, plane=choice.get("plane"),
            href=lambda host: reverse("health:node_health", args=[machine.name, host])
            + f"?{query}")
        node_states = dict(machine.nodes.filter(
            hostname__in=[s.node for s in state.suspicion if s.abnormal_runs][:500]
        ).values_list("hostname", "state"))
        candidates = [(s, node_states.get(s.node), health.drain_reason(s))
                      for s in state.candidates]
        watch = [(s, node_states.get(s.node)) for s in state.suspicion
                 if s.abnormal_runs and not s.drain_candidate][:20]
        context = super().get_context_data(**kwargs)
        context.update(
            machine=machine, state=state, form=form, grid=grid, plane=grid.plane,
            candidates=candidates, watch=watch,
            histogram=self._histogram(state), estimate_charts=self._estimate_charts(machine),
            runs=machine.estimation_runs.select_related("user")[:5],
            estimation_form=self.estimation_form or EstimationForm(
                initial={"window_days": window}),
            drain_factor=f"{health.DRAIN_FACTOR:g}",
            drain_probability=f"{health.DRAIN_PROBABILITY:g}",
            query=query)
        return context

    @staticmethod
    def _histogram(state: health.MachineHealth) -> dict | None:
        return latest_time_histogram(state)

    @staticmethod
    def _estimate_charts(machine: Machine) -> list[dict]:
        by_benchmark: dict[str, list[Estimate]] = defaultdict(list)
        for estimate in Estimate.objects.filter(machine=machine).order_by("-created_at", "-id")[
                :ESTIMATES_PER_CHART * 10]:
            if len(by_benchmark[estimate.benchmark]) < ESTIMATES_PER_CHART:
                by_benchmark[estimate.benchmark].append(estimate)
        return [{"benchmark": name, "latest": items[0], **estimate_charts(name, items[::-1])}
                for name, items in sorted(by_benchmark.items())]


def latest_time_histogram(state: health.MachineHealth) -> dict | None:
    """Each node's latest time, binned; abnormal nodes a separate red series on a log
    count axis, so one abnormal node among thousands still shows."""
    latest = list(state.latest.values())
    if not latest:
        return None
    edges, scale = charts.histogram_bins([s for s, _, _ in latest])
    normal = [0] * (len(edges) - 1)
    abnormal = [0] * (len(edges) - 1)
    for seconds, flag, _ in latest:
        (abnormal if flag else normal)[charts.bin_index(edges, seconds)] += 1
    median = _median([s for s, _, _ in latest])
    lines = []
    if median is not None and state.ratio_threshold:
        threshold = median * state.ratio_threshold
        if edges[0] <= threshold <= edges[-1]:
            lines.append((charts.fractional_position(edges, threshold, scale),
                          f"abnormal threshold {fmt.sig(threshold, 3)} s"))
    if median is not None:
        lines.append((charts.fractional_position(edges, median, scale),
                      f"median {fmt.sig(median, 3)} s"))
    labels = [f"{fmt.sig(lo, 3)}–{fmt.sig(hi, 3)}" for lo, hi in itertools.pairwise(edges)]
    return charts.bar_chart(
        "histogram", f"Latest {state.benchmark} time per node ({len(latest):,} nodes, "
                     f"{sum(abnormal):,} abnormal)",
        charts.axis(f"latest {state.benchmark} time", "s", scale="category"),
        charts.axis("nodes", "count", scale="log" if sum(abnormal) else "linear"),
        labels, [charts.bars("normal", normal, colour=2),
                 charts.bars("abnormal", abnormal, role="bad")],
        stacked=True, vlines=lines, filename=f"{state.machine.name}-{state.benchmark}-times")


def estimate_charts(benchmark: str, items: list[Estimate]) -> dict:
    """p_abn with its 95 % interval, alpha_abn and t_bench over time (oldest first)."""
    xs = [e.created_at.timestamp() for e in items]
    when = charts.axis("estimated at", "UTC", scale="time")
    alpha = [(x, e.alpha_abn) for x, e in zip(xs, items, strict=True) if e.alpha_abn is not None]
    t_bench = [e.t_bench for e in items]
    return {
        "p_abn": charts.xy_chart(
            f"p-abn-{benchmark}", f"{benchmark}: p_abn with its 95 % interval", when,
            charts.axis("p_abn", "probability", zero=True),
            [charts.band("95 % interval", xs, [e.p_abn_low for e in items],
                         [e.p_abn_high for e in items]),
             charts.line("p_abn", xs, [e.p_abn for e in items], points=True)]),
        "alpha": charts.xy_chart(
            f"alpha-{benchmark}", f"{benchmark}: alpha_abn (slowdown of an abnormal node)",
            when, charts.axis("alpha_abn", "×"),
            [charts.line("alpha_abn", [x for x, _ in alpha], [a for _, a in alpha],
                         colour=1, points=True)]),
        "t_bench": charts.xy_chart(
            f"t-bench-{benchmark}", f"{benchmark}: t_bench", when,
            charts.axis("t_bench", "s", scale=charts.scale_for(t_bench)),
            [charts.line("t_bench", xs, t_bench, colour=2, points=True)]),
    }


class NodeHealthPageView(RoleRequiredMixin, TemplateView):
    """One node's benchmark history: time / job median over time, threshold drawn."""

    template_name = "health/health_node.html"

    def get_context_data(self, **kwargs):
        machine = get_object_or_404(Machine, name=self.kwargs["name"])
        node = get_object_or_404(Node, machine=machine, hostname=self.kwargs["hostname"])
        form = HealthFilterForm(self.request.GET or None,
                                benchmarks=health.benchmarks_of(machine))
        choice = form.cleaned_data if form.is_bound and form.is_valid() else {}
        window = choice.get("window") or DEFAULT_WINDOW_DAYS
        state = health.machine_health(machine, choice.get("benchmark") or "", window,
                                      reader=self.request.user)
        history = health.node_history(node, state.benchmark, reader=self.request.user)
        threshold = state.ratio_threshold
        for row in history:
            row["abnormal"] = threshold is not None and row["ratio"] > threshold
        ordered = list(reversed(history))
        xs = [r["measured_at"].timestamp() for r in ordered]
        ratios = [r["ratio"] for r in ordered]
        chart = charts.xy_chart(
            "node-history",
            f"{node.hostname}: {state.benchmark} time relative to its job's median",
            charts.axis("measured at", "UTC", scale="time"),
            charts.axis("time / job median", "×", scale=charts.scale_for(ratios)),
            [charts.line("time / job median", xs, ratios, points=True,
                         highlight=[r["abnormal"] for r in ordered])],
            hlines=[(threshold, f"abnormal threshold {threshold:.3g}×")] if threshold else [],
            filename=f"{node.hostname}-{state.benchmark}-history") if ordered else None
        context = super().get_context_data(**kwargs)
        context.update(machine=machine, node=node, state=state, history=history, chart=chart,
                       suspicion=state.by_node.get(node.hostname), window=window,
                       drain_form=DrainForm(initial={"hostname": node.hostname,
                                                     "benchmark": state.benchmark,
                                                     "window": window}))
        return context


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
                                                data.get("benchmark") or "", window)
        except ValidationError as exc:
            messages.error(request, " ".join(m for ms in exc.message_dict.values() for m in ms))
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


class EstimationRunPageView(RoleRequiredMixin, DetailView):
    template_name = "health/health_run.html"
    context_object_name = "run"
    queryset = EstimationRun.objects.select_related("machine", "user")

    def get_context_data(self, **kwargs):
        return super().get_context_data(estimates=self.object.estimates.order_by("benchmark"),
                                        **kwargs)


class SparesPageView(RoleRequiredMixin, TemplateView):
    """The spare calculator: E[C] and E[T_total] against N_spare, the optimum and As-is."""

    template_name = "health/health_spares.html"

    def get_context_data(self, **kwargs):
        form = SparesForm(self.request.GET or None)
        result = charts = saving = None
        if form.is_bound and form.is_valid():
            data = form.cleaned_data
            try:
                result = health.recommend(
                    n_node=data["n_node"], t_cmpt=data["t_cmpt"], t_comm=data["t_comm"],
                    wall_time=data["wall_time"], compute_fraction=data["compute_fraction"],
                    machine=data["machine"], benchmark=data["benchmark"], p_abn=data["p_abn"],
                    alpha_abn=data["alpha_abn"], t_bench=data["t_bench"],
                    per_node=data["per_node"])
            except ValidationError as exc:
                add_form_errors(form, exc)
            else:
                charts, saving = self._charts(result), self._saving(result)
        return super().get_context_data(form=form, result=result, charts=charts, saving=saving,
                                        **kwargs)

    @staticmethod
    def _saving(r: dict) -> str:
        saved = 1 - r["expected_cost"] / r["as_is_cost"]
        spares = "no spare" if r["n_spare"] == 0 else (
            "1 spare node" if r["n_spare"] == 1 else f"{r['n_spare']} spare nodes")
        cost, as_is = fmt.node_seconds(r["expected_cost"]), fmt.node_seconds(r["as_is_cost"])
        if saved > 0:
            return (f"Allocate {r['n_total']:,} nodes ({spares}), benchmark them and drop the "
                    f"{r['n_spare']:,} slowest: the job is expected to cost {cost} instead "
                    f"of {as_is} as-is, saving {saved:.1%} of the node-time, and to finish "
                    f"in {fmt.seconds(r['expected_time'])} instead of "
                    f"{fmt.seconds(r['as_is_time'])}.")
        return (f"The method does not pay off here: the best choice ({spares}) costs "
                f"{cost} against {as_is} as-is.")

    @staticmethod
    def _charts(r: dict) -> dict:
        return spare_curves(r)


def spare_curves(r: dict, *, testid: str = "cost-curve", policy: str = "") -> dict:
    """E[C] and E[T_total] against N_spare, As-is as a line, the optimum marked."""
    xs = [p["n_spare"] for p in r["curve"]]
    cost = [p["expected_cost"] for p in r["curve"]]
    times = [p["expected_time"] for p in r["curve"]]
    x = charts.axis("N_spare", "nodes", zero=True)
    suffix = f" ({policy})" if policy else ""
    out = {"cost": charts.xy_chart(
        testid, f"Expected cost E[C] against N_spare{suffix}", x,
        charts.axis("E[C]", "node-s", scale=charts.scale_for([*cost, r["as_is_cost"]])),
        [charts.line("E[C]", xs, cost)],
        hlines=[(r["as_is_cost"], f"As-is {fmt.node_seconds(r['as_is_cost'])}")],
        marks=[(r["n_spare"], r["expected_cost"],
                f"optimum N_spare = {r['n_spare']}: {fmt.node_seconds(r['expected_cost'])}")])}
    if times and r.get("as_is_time") is not None:
        out["time"] = charts.xy_chart(
            "time-curve", f"Expected time E[T_total] against N_spare{suffix}", x,
            charts.axis("E[T_total]", "s", scale=charts.scale_for([*times, r["as_is_time"]])),
            [charts.line("E[T_total]", xs, times, colour=1)],
            hlines=[(r["as_is_time"], f"As-is {fmt.seconds(r['as_is_time'])}")],
            marks=[(r["n_spare"], r["expected_time"],
                    f"at the optimum: {fmt.seconds(r['expected_time'])}")])
    return out


# --------------------------------------------------------------------------
# Benchmark upload and keep-the-fastest (the API's actions, as pages)


def upload_owner(user):
    """Whose jobs a page upload may write for: any (None) for admins, else one's own;
    the rule of ``POST /api/v1/benchmarks/``."""
    return None if role_at_least(user, Role.ADMIN) else user


class BenchmarkUploadView(RoleRequiredMixin, FormView):
    """Upload benchmark times from a CSV file or pasted CSV/JSON; each problem is
    listed with the row it is about, nothing is stored unless every row is valid."""

    required_role = Role.OPERATOR
    template_name = "health/benchmark_upload.html"
    form_class = BenchmarkUploadForm

    def form_valid(self, form):
        upload = form.cleaned_data.get("file")
        try:
            if upload is not None:
                if upload.size > settings.HX_MAX_BODY_BYTES:
                    raise ValidationError({"file": ["larger than the upload limit"]})
                try:
                    text = upload.read().decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise ValidationError({"file": ["not UTF-8 text"]}) from exc
            else:
                text = form.cleaned_data["text"].strip()
            owner = upload_owner(self.request.user)
            if upload is None and text[:1] in "{[":
                try:
                    payload = json.loads(text, parse_constant=float)
                except ValueError as exc:
                    raise ValidationError({"text": [f"not valid JSON: {exc}"]}) from exc
                result = health.ingest_payload(payload, owner=owner)
            else:
                result = health.ingest_csv(text, owner=owner)
        except ValidationError as exc:
            rows = _row_errors(exc, form)
            return self.render_to_response(self.get_context_data(form=form, row_errors=rows))
        replaced = f", replacing {result.replaced:,}" if result.replaced else ""
        messages.success(self.request, f"Stored {result.stored:,} benchmark times{replaced}.")
        return self.render_to_response(self.get_context_data(
            form=BenchmarkUploadForm(), result=result))


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


class SelectFastestPageView(RoleRequiredMixin, FormView):
    """After a job's benchmark: keep its N fastest nodes, drop the rest. Everyone who may
    read the job previews; its owner (or an admin) records the roles, as with
    ``POST /api/v1/select-fastest/`` and ``record_roles``."""

    template_name = "health/select_fastest.html"
    form_class = SelectFastestForm
    http_method_names = ["get", "post", "head", "options"]

    def dispatch(self, request, *args, **kwargs):
        # Recording (POST) changes the job: only rows one may change, else 404 as the API.
        scope = ownership.writable if request.method == "POST" else ownership.readable
        self.job = get_object_or_404(scope(Job.objects.select_related("machine", "owner"),
                                           request.user, "owner"), pk=kwargs["pk"])
        self.benchmarks = health.job_benchmarks(self.job)
        return super().dispatch(request, *args, **kwargs)

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
        data = form.cleaned_data
        record = self.request.method == "POST"
        if record and not self.can_record():
            form.add_error(None, "Only the job's owner or an admin may record the selection, "
                                 "and only while the job holds its nodes.")
            return self.form_invalid(form)
        try:
            result = health.select_fastest(
                n_node=data["n_node"], job=self.job, benchmark=data["benchmark"],
                abnormal_threshold=data.get("abnormal_threshold"))
            if record:
                roles = health.record_selection(self.job, result["keep"], result["dropped"])
        except ValidationError as exc:
            add_form_errors(form, exc)
            return self.form_invalid(form)
        if record:
            messages.success(self.request, f"Job {self.job.pk}: kept {roles['primary']:,} "
                                           f"nodes, excluded {roles['excluded']:,}.")
            return redirect(self.job)
        keep = set(hostlists.expand(result["keep"]))
        abnormal = set(hostlists.expand(result["abnormal"])) | set(
            hostlists.expand(result["abnormal_kept"]))
        times = [{"hostname": host, "seconds": seconds, "kept": host in keep,
                  "abnormal": host in abnormal,
                  "ratio": seconds / result["median"] if result["median"] else None}
                 for host, seconds in health.job_times(self.job, result["benchmark"])]
        grid = candidate_grid(
            self.job.machine, keep, excluded=set(hostlists.expand(result["dropped"])),
            request=self.request, testid="selection-grid", label="kept")
        return self.render_to_response(self.get_context_data(
            form=form, result=result, times=times, grid=grid))
