"""Chart specifications of a study's results (drawn by the project's chart module)."""

from __future__ import annotations

from hxportal.charts import axis, bar_chart, bars, line, xy_chart

#: At most this many scenarios get a line in the over-time charts (the best by wait).
MAX_LINES = 8


def _label(entry: dict) -> str:
    return f"{entry['policy']} / {entry['spares']}"


def _hours_axis(details: list[dict]) -> list[float]:
    series = details[0]["series"]
    n = len(series.get("utilisation") or [])
    t0, t1 = series.get("t0", 0.0), series.get("t1", 0.0)
    step = (t1 - t0) / n if n else 0.0
    return [(i + 0.5) * step / 3600.0 for i in range(n)]


def _chosen(entries: list[dict]) -> list[int]:
    order = sorted(range(len(entries)), key=lambda i: entries[i]["summary"]["mean_wait_s"])
    return sorted(order[:MAX_LINES])


def study_charts(data: dict) -> list[dict]:
    """Utilisation and queue over time, the wait CDF and the node-hours breakdown."""
    entries, details = data["scenarios"], data["details"]
    if not entries:
        return []
    chosen = _chosen(entries)
    charts = []
    for key, title, unit in (("utilisation", "Utilisation over time", "fraction"),
                             ("queue", "Queue length over time", "jobs"),
                             ("whole_free_switches", "Whole free switches over time",
                              "switches")):
        series = []
        for colour, i in enumerate(chosen):
            s = details[i]["series"]
            n = len(s.get(key) or [])
            t0, t1 = s.get("t0", 0.0), s.get("t1", 0.0)
            xs = [(t0 + (k + 0.5) * (t1 - t0) / n - t0) / 3600.0 for k in range(n)]
            series.append(line(_label(entries[i]), xs, s.get(key) or [], colour=colour))
        charts.append(xy_chart(f"whatif-{key.replace('_', '-')}", title,
                               axis("time since the first submit", "h"),
                               axis(title.split(" over")[0].lower(), unit, zero=True), series))
    cdf = [line(_label(entries[i]), details[i]["wait_cdf"]["wait_s"],
                details[i]["wait_cdf"]["quantiles"], colour=c) for c, i in enumerate(chosen)]
    charts.append(xy_chart("whatif-wait-cdf", "Wait CDF", axis("wait", "s"),
                           axis("share of jobs", "fraction", zero=True), cdf))
    cats = [_label(e) for e in entries]
    charts.append(bar_chart(
        "whatif-node-hours", "Node-hours breakdown", axis("scenario", "policy / spares"),
        axis("node-hours", "node·h", zero=True), cats,
        [bars("useful", [e["summary"]["node_hours_useful"] for e in entries], colour=0),
         bars("spares (benchmark, held)", [e["summary"]["node_hours_spares"] for e in entries],
              colour=1),
         bars("lost to slow nodes", [e["summary"]["node_hours_lost_slow"] for e in entries],
              colour=2, role="bad")], stacked=True))
    return charts
