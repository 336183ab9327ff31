"""What the health pages draw: latest times as a histogram, a node's history,
estimates over time and the spare calculator's curves (chart specifications for
``static/hxportal/charts.js``, built on :mod:`hxportal.charts`)."""

from __future__ import annotations

import itertools

from health import services as health
from health.models import Estimate
from hxportal import charts
from hxportal.templatetags import hxformat as fmt


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
    median = health.median(s for s, _, _ in latest)
    lines = []
    if state.ratio_threshold:
        threshold = median * state.ratio_threshold
        if edges[0] <= threshold <= edges[-1]:
            lines.append((charts.fractional_position(edges, threshold, scale),
                          f"abnormal threshold {fmt.sig(threshold, 3)} s"))
    lines.append((charts.fractional_position(edges, median, scale),
                  f"median {fmt.sig(median, 3)} s"))
    labels = [f"{fmt.sig(lo, 3)}–{fmt.sig(hi, 3)}" for lo, hi in itertools.pairwise(edges)]
    return charts.bar_chart(
        "histogram", f"Latest {state.benchmark} time per node ({len(latest):,} nodes, "
                     f"{sum(abnormal):,} abnormal)",
        charts.axis(f"latest {state.benchmark} time", "s", scale="category"),
        charts.axis("nodes", "count", scale="log" if sum(abnormal) else "linear",
                    integer=True),
        labels, [charts.bars("normal", normal, colour=2),
                 charts.bars("abnormal", abnormal, role="bad")],
        stacked=True, vlines=lines, filename=f"{state.machine.name}-{state.benchmark}-times")


def node_history_chart(hostname: str, benchmark: str, ordered: list[dict],
                       threshold: float | None) -> dict | None:
    """A node's time relative to its job's median over time (oldest first), the
    abnormal threshold drawn and the abnormal runs highlighted; None without runs."""
    if not ordered:
        return None
    xs = [r["measured_at"].timestamp() for r in ordered]
    ratios = [r["ratio"] for r in ordered]
    return charts.xy_chart(
        "node-history",
        f"{hostname}: {benchmark} time relative to its job's median",
        charts.axis("measured at", "UTC", scale="time"),
        charts.axis("time / job median", "×", scale=charts.scale_for(ratios)),
        [charts.line("time / job median", xs, ratios, points=True,
                     highlight=[r["abnormal"] for r in ordered])],
        hlines=[(threshold, f"abnormal threshold {threshold:.3g}×")] if threshold else [],
        filename=f"{hostname}-{benchmark}-history")


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


def spare_curves(r: dict, *, testid: str = "cost-curve", policy: str = "") -> dict:
    """E[C] and E[T_total] against N_spare, As-is as a line, the optimum marked."""
    xs = [p["n_spare"] for p in r["curve"]]
    cost = [p["expected_cost"] for p in r["curve"]]
    times = [p["expected_time"] for p in r["curve"]]
    x = charts.axis("N_spare", "nodes", zero=True, integer=True)
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
