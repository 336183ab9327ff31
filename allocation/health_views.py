"""Node-health and spare-calculator pages. Thin: ``allocation.health`` computes and writes."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime
from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views import View
from django.views.generic import DetailView, TemplateView

from allocation import health
from allocation.grid import GridShape, build_plane
from allocation.health_charts import Mark, Series, histogram, line_chart
from allocation.health_forms import DrainForm, EstimationForm, HealthFilterForm, SparesForm
from allocation.models import Estimate, EstimationRun, Machine, Node, NodeState
from allocation.models.benchmarks import DEFAULT_WINDOW_DAYS
from hxportal.roles import Role
from hxportal.templatetags import hxformat as fmt
from hxportal.views import RoleRequiredMixin, add_form_errors

ESTIMATES_PER_CHART = 100


def _time_ticks(stamps: list[float]) -> list[tuple[float, str]]:
    if not stamps:
        return []
    lo, hi = min(stamps), max(stamps)
    count = 1 if hi == lo else 4
    layout = "%Y-%m-%d" if hi - lo > 2 * 86400 else "%m-%d %H:%M"
    return [(lo + (hi - lo) * i / max(count - 1, 1),
             datetime.fromtimestamp(lo + (hi - lo) * i / max(count - 1, 1), tz=UTC)
             .strftime(layout)) for i in range(count)]


def _median(values: list[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    m = len(ordered)
    return 0.5 * (ordered[(m - 1) // 2] + ordered[m // 2])


class HealthIndexView(RoleRequiredMixin, TemplateView):
    template_name = "allocation/health_index.html"

    def get_context_data(self, **kwargs):
        latest: dict[int, dict[str, Estimate]] = defaultdict(dict)
        for estimate in Estimate.objects.order_by("machine_id", "benchmark", "-created_at"):
            latest[estimate.machine_id].setdefault(estimate.benchmark, estimate)
        machines = [(m, sorted(latest[m.pk].values(), key=lambda e: e.benchmark))
                    for m in Machine.objects.order_by("name")]
        return super().get_context_data(machines=machines, **kwargs)


class MachineHealthView(RoleRequiredMixin, TemplateView):
    """The switch grid by suspicion, latest times, drain candidates and estimates over time."""

    template_name = "allocation/health_machine.html"
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
        shape = GridShape(tuple(machine.sides))
        plane = min(max(choice.get("plane") or 0, 0), shape.planes - 1)
        start, end = shape.switch_range(plane)
        by_node = state.by_node
        nodes = []
        for node in machine.nodes.filter(switch__gte=start, switch__lt=end).values(
                "switch", "coords", "local", "hostname", "state"):
            item = by_node.get(node["hostname"])
            node["level"] = health.suspicion_level(item)
            node["tip"] = (f"{node['hostname']}: no {state.benchmark or 'benchmark'} runs"
                           if item is None else
                           f"{node['hostname']}: {item.abnormal_runs}/{item.runs} runs abnormal,"
                           f" score {item.score:.2f}")
            if node["state"] != NodeState.UP:
                node["tip"] += f" ({node['state']})"
            nodes.append(node)
        node_states = dict(machine.nodes.filter(
            hostname__in=[s.node for s in state.suspicion if s.abnormal_runs][:500]
        ).values_list("hostname", "state"))
        candidates = [(s, node_states.get(s.node), health.drain_reason(s))
                      for s in state.candidates]
        watch = [(s, node_states.get(s.node)) for s in state.suspicion
                 if s.abnormal_runs and not s.drain_candidate][:20]
        context = super().get_context_data(**kwargs)
        context.update(
            machine=machine, state=state, form=form, shape=shape, plane=plane,
            plane_labels=list(enumerate(shape.plane_labels())),
            grid=build_plane(shape, plane, nodes), candidates=candidates, watch=watch,
            histogram=self._histogram(state), estimate_charts=self._estimate_charts(machine),
            runs=machine.estimation_runs.select_related("user")[:5],
            estimation_form=self.estimation_form or EstimationForm(
                initial={"window_days": window}),
            drain_factor=f"{health.DRAIN_FACTOR:g}",
            drain_probability=f"{health.DRAIN_PROBABILITY:g}",
            query=urlencode({"benchmark": state.benchmark, "window": window}),
            levels=[("ok", "no abnormal run"), ("watch", "some abnormal runs"),
                    ("suspect", "drain candidate"), ("nodata", "no data")])
        return context

    @staticmethod
    def _histogram(state: health.MachineHealth):
        normal = [s for s, flag, _ in state.latest.values() if not flag]
        abnormal = [s for s, flag, _ in state.latest.values() if flag]
        median = _median(normal + abnormal)
        threshold = (median * state.ratio_threshold
                     if median is not None and state.ratio_threshold else None)
        return histogram(normal, abnormal, threshold=threshold, median=median,
                         title=f"latest {state.benchmark} time per node", testid="histogram")

    @staticmethod
    def _estimate_charts(machine: Machine) -> list[dict]:
        by_benchmark: dict[str, list[Estimate]] = defaultdict(list)
        for estimate in Estimate.objects.filter(machine=machine).order_by("-created_at", "-id")[
                :ESTIMATES_PER_CHART * 10]:
            if len(by_benchmark[estimate.benchmark]) < ESTIMATES_PER_CHART:
                by_benchmark[estimate.benchmark].append(estimate)
        charts = []
        for name, items in sorted(by_benchmark.items()):
            items.reverse()
            xs = [e.created_at.timestamp() for e in items]
            ticks = _time_ticks(xs)
            with_alpha = [(x, e.alpha_abn) for x, e in zip(xs, items, strict=True)
                          if e.alpha_abn is not None]
            charts.append({
                "benchmark": name, "latest": items[-1],
                "p_abn": line_chart(
                    [Series("p_abn", xs, [e.p_abn for e in items], "s1", markers=True)],
                    band=(xs, [e.p_abn_low for e in items], [e.p_abn_high for e in items]),
                    title=f"{name}: p_abn with its 95% interval", testid=f"p-abn-{name}",
                    x_label="estimated at", y_label="p_abn", x_ticks=ticks, y_zero=True),
                "alpha": line_chart(
                    [Series("alpha_abn", [x for x, _ in with_alpha],
                            [a for _, a in with_alpha], "s2", markers=True)],
                    title=f"{name}: alpha_abn", testid=f"alpha-{name}",
                    x_label="estimated at", y_label="alpha_abn", x_ticks=ticks),
                "t_bench": line_chart(
                    [Series("t_bench", xs, [e.t_bench for e in items], "s3", markers=True)],
                    title=f"{name}: t_bench", testid=f"t-bench-{name}",
                    x_label="estimated at", y_label="t_bench (s)", x_ticks=ticks),
            })
        return charts


class NodeHealthPageView(RoleRequiredMixin, TemplateView):
    """One node's benchmark history: time / job median over time, threshold drawn."""

    template_name = "allocation/health_node.html"

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
        chart = line_chart(
            [Series("time / job median", xs, [r["ratio"] for r in ordered], "s1",
                    markers=True, highlight=[r["abnormal"] for r in ordered])],
            hlines=[(threshold, f"threshold {threshold:.3g}x")] if threshold else [],
            title=f"{node.hostname}: {state.benchmark} time relative to its job's median",
            testid="node-history", x_label="measured at", y_label="time / job median",
            x_ticks=_time_ticks(xs))
        context = super().get_context_data(**kwargs)
        context.update(machine=machine, node=node, state=state, history=history, chart=chart,
                       suspicion=state.by_node.get(node.hostname), window=window,
                       drain_form=DrainForm(initial={"hostname": node.hostname,
                                                     "benchmark": state.benchmark,
                                                     "window": window}))
        return context


class DrainSuspectView(RoleRequiredMixin, View):
    """One click: drain a node, the reason quoting its benchmark evidence."""

    required_role = Role.OPERATOR
    http_method_names = ["post"]

    def post(self, request, name: str):
        machine = get_object_or_404(Machine, name=name)
        form = DrainForm(request.POST)
        target = reverse("allocation:machine_health", args=[machine.name])
        if not form.is_valid():
            messages.error(request, "Nothing drained: the drain form was incomplete.")
            return redirect(target)
        data = form.cleaned_data
        window = data.get("window") or DEFAULT_WINDOW_DAYS
        try:
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
                return redirect("allocation:estimation_run", pk=run.pk)
        # Refused: the health page again, the errors next to the form's fields and the
        # submitted values kept (not a message at the top of a long page).
        page = MachineHealthView(estimation_form=form)
        page.setup(request, name=name)
        return page.render_to_response(page.get_context_data())


class EstimationRunPageView(RoleRequiredMixin, DetailView):
    template_name = "allocation/health_run.html"
    context_object_name = "run"
    queryset = EstimationRun.objects.select_related("machine", "user")

    def get_context_data(self, **kwargs):
        return super().get_context_data(estimates=self.object.estimates.order_by("benchmark"),
                                        **kwargs)


class SparesPageView(RoleRequiredMixin, TemplateView):
    """The spare calculator: E[C] and E[T_total] against N_spare, the optimum and As-is."""

    template_name = "allocation/health_spares.html"

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
        xs = [p["n_spare"] for p in r["curve"]]
        common = {"x_label": "N_spare"}
        return {
            "cost": line_chart(
                [Series("E[C]", xs, [p["expected_cost"] for p in r["curve"]], "s1")],
                hlines=[(r["as_is_cost"], f"As-is {fmt.sig(r['as_is_cost'], 4)}")],
                marks=[Mark(r["n_spare"], r["expected_cost"],
                            f"optimum N_spare={r['n_spare']}: {fmt.sig(r['expected_cost'], 4)}")],
                title="expected cost E[C] (node-seconds) against N_spare", testid="cost-curve",
                y_label="E[C] (node-s)", **common),
            "time": line_chart(
                [Series("E[T_total]", xs, [p["expected_time"] for p in r["curve"]], "s2")],
                hlines=[(r["as_is_time"], f"As-is {fmt.seconds(r['as_is_time'])}")],
                marks=[Mark(r["n_spare"], r["expected_time"],
                            f"at the optimum: {fmt.seconds(r['expected_time'])}")],
                title="expected time E[T_total] (s) against N_spare", testid="time-curve",
                y_label="E[T_total] (s)", **common),
        }
