"""Node-health and spare-calculator pages (reading). Thin: ``health.services`` computes."""

from __future__ import annotations

from collections import defaultdict
from urllib.parse import urlencode

from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.views.generic import DetailView, TemplateView

from allocation.grid import health_grid
from allocation.models import Machine, Node
from health import services as health
from health.charts import (
    estimate_charts,
    latest_time_histogram,
    node_history_chart,
    spare_curves,
)
from health.constants import DEFAULT_WINDOW_DAYS
from health.forms import DrainForm, EstimationForm, HealthFilterForm, SparesForm
from health.models import Estimate, EstimationRun
from hxportal.templatetags import hxformat as fmt
from hxportal.views import RoleRequiredMixin, add_form_errors

ESTIMATES_PER_CHART = 100


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
                         f" score {item.score:.3g}") for name, item in state.by_node.items()}
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
        watch = [(s, node_states.get(s.node), health.needs_text(s))
                 for s in state.watch[:health.WATCH_SHOWN]]
        context = super().get_context_data(**kwargs)
        context.update(
            machine=machine, state=state, form=form, grid=grid, plane=grid.plane,
            candidates=candidates, watch=watch, watch_total=len(state.watch),
            histogram=self._histogram(state), estimate_charts=self._estimate_charts(machine),
            runs=machine.estimation_runs.select_related("user")[:5],
            estimation_form=self.estimation_form or EstimationForm(
                initial={"window_days": window}),
            drain_probability=f"{health.DRAIN_PROBABILITY:g}",
            drain_min_runs=health.DRAIN_MIN_RUNS,
            drain_prior=f"{health.DRAIN_PRIOR:g}",
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
        chart = node_history_chart(node.hostname, state.benchmark, list(reversed(history)),
                                   threshold)
        context = super().get_context_data(**kwargs)
        context.update(machine=machine, node=node, state=state, history=history, chart=chart,
                       suspicion=state.by_node.get(node.hostname), window=window,
                       drain_form=DrainForm(initial={"hostname": node.hostname,
                                                     "benchmark": state.benchmark,
                                                     "window": window}))
        return context


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
                    per_node=data["per_node"],
                    release=False if data["hold_spares"] else None)
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
