"""Simulation results shaped for the pages: chart specifications for
``static/hxportal/charts.js`` (see :mod:`hxportal.charts`) and the link
utilisation heat map as cells the template draws.

Plain functions from result dictionaries or flat result rows
(:data:`simulation.services.RESULT_COLUMNS`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from hxportal import charts

KEYS = ("scenario", "pattern", "ranks", "replicas", "routing", "vc_sets", "seed",
        "message_packets")


def switch_utilisation(result: dict[str, Any]) -> list[dict[str, float]]:
    """Per switch: max and mean utilisation of its outgoing network links."""
    sides = (result.get("config") or {}).get("sides") or []
    n = math.prod(sides) if sides else 0
    peak = [0.0] * n
    total = [0.0] * n
    count = [0] * n
    for src, _dst, u in result.get("link_utilisation") or []:
        if 0 <= src < n:
            peak[src] = max(peak[src], u)
            total[src] += u
            count[src] += 1
    return [{"max": peak[s], "mean": total[s] / count[s] if count[s] else 0.0}
            for s in range(n)]


def heat_level(u: float) -> int:
    """Utilisation 0..1 as one of eleven CSS classes (``heat-0`` .. ``heat-10``).

    >>> heat_level(0.0), heat_level(0.44), heat_level(1.0)
    (0, 4, 10)
    """
    return int(min(max(float(u), 0.0), 1.0) * 10 + 1e-9)


def heatmap(result: dict[str, Any]) -> dict[str, Any] | None:
    """The switch grid for the page, each switch by the busiest of its outgoing links.

    Rows are the first coordinate, columns the others (C order, as the engine
    numbers switches); switches holding endpoints of the first application are
    marked ``target``. Drawn by the template as HTML cells (no SVG, no script).
    """
    config = result.get("config") or {}
    sides = list(config.get("sides") or [])
    if not sides:
        return None
    cols = math.prod(sides[1:]) if len(sides) > 1 else 1
    conc = int(config.get("concentration") or 1)
    apps = result.get("apps") or []
    target = {e // conc for e in (apps[0].get("partition") or [])} if apps else set()
    rows: list[dict[str, Any]] = []
    for s, u in enumerate(switch_utilisation(result)):
        r, c = divmod(s, cols)
        if c == 0:
            rows.append({"label": r, "cells": []})
        rows[-1]["cells"].append({
            "switch": s, "coords": f"{r},{c}", "max": u["max"], "mean": u["mean"],
            "level": heat_level(u["max"]), "target": s in target})
    return {"rows": rows, "cols": cols, "col_labels": list(range(cols)),
            "legend": [(i, f"{i * 10}%") for i in range(11)]}


def escalation_chart(series: dict[str, list[tuple[float, float]]]) -> dict | None:
    """Makespan against replicas, one line per policy."""
    if not any(series.values()):
        return None
    values = [y for pts in series.values() for _, y in pts]
    return charts.xy_chart(
        "escalation-chart", "Escalation: makespan against replicas",
        charts.axis("replicas", "copies", integer=True),
        charts.axis("makespan", "cycles", scale=charts.scale_for(values)),
        [charts.line(label, [x for x, _ in sorted(pts)], [y for _, y in sorted(pts)],
                     colour=i, points=True) for i, (label, pts) in enumerate(series.items())],
        filename="escalation")


def interference_chart(groups: list[tuple[str, list[tuple[str, float | None]]]],
                       series: Sequence[str]) -> dict | None:
    """Isolated and interfered completion of the target application, per kernel."""
    values = [v for _, bars in groups for _, v in bars if v is not None]
    if not values:
        return None
    by_series = {s: [dict(bars).get(s) for _, bars in groups] for s in series}
    return charts.bar_chart(
        "interference-chart", "Isolated against interfered completion",
        charts.axis("kernel", "pattern", scale="category"),
        charts.axis("target completion", "cycles", scale=charts.scale_for(values)),
        [group for group, _ in groups],
        [charts.bars(s, by_series[s], colour=i) for i, s in enumerate(series)],
        filename="interference")


# --------------------------------------------------------------------------
# Shaping sweep rows


def choices(rows: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """Distinct values of each key among succeeded rows (the page's selectors)."""
    out: dict[str, set] = defaultdict(set)
    for row in rows:
        for key in (*KEYS, "policy"):
            if row.get(key) is not None:
                out[key].add(row[key])
    return {k: sorted(v, key=lambda x: (str(type(x)), x)) for k, v in out.items()}


def select(rows: list[dict[str, Any]], **fixed: Any) -> list[dict[str, Any]]:
    return [r for r in rows if all(r.get(k) == v for k, v in fixed.items() if v is not None)]


def escalation_series(rows: list[dict[str, Any]]) -> dict[str, list[tuple[float, float]]]:
    """Makespan against replicas per policy (escalation rows that completed)."""
    series: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for r in rows:
        if r.get("scenario") == "escalation" and r.get("makespan_cycles") is not None:
            series[r["policy"]].append((r["replicas"], r["makespan_cycles"]))
    return dict(series)


def interference_groups(rows: list[dict[str, Any]], policies: Sequence[str]
                        ) -> tuple[list[tuple[str, list]], list[str]]:
    """Per kernel, per policy: isolated (1-replica escalation or single) and interfered
    completion of the target application."""
    iso: dict[tuple[str, str], float] = {}
    inter: dict[tuple[str, str], float] = {}
    for r in rows:
        value = r.get("target_cycles")
        if value is None:
            continue
        key = (r["pattern"], r["policy"])
        if r.get("scenario") == "interference":
            inter[key] = value
        elif r.get("scenario") == "single" or (r.get("scenario") == "escalation"
                                               and r.get("replicas") == 1):
            iso[key] = value
    patterns = sorted({p for p, _ in inter})
    series = [f"{p} {kind}" for p in policies for kind in ("isolated", "interfered")]
    groups = []
    for pattern in patterns:
        bars = []
        for p in policies:
            bars.append((f"{p} isolated", iso.get((pattern, p))))
            bars.append((f"{p} interfered", inter.get((pattern, p))))
        groups.append((pattern, bars))
    return groups, series


def normalised_table(rows: list[dict[str, Any]], baseline: str
                     ) -> tuple[list[str], list[dict[str, Any]]]:
    """Makespan of each policy divided by the baseline policy's, per configuration.

    Returns the policies (columns) and one row per configuration (the other keys)
    with ``values[policy] -> ratio or None``.
    """
    policies = sorted({r["policy"] for r in rows if r.get("policy")})
    by_key: dict[tuple, dict[str, float]] = defaultdict(dict)
    for r in rows:
        value = r.get("makespan_cycles")
        if value is None:
            continue
        key = tuple(r.get(k) for k in KEYS)
        by_key[key][r["policy"]] = value
    table = []
    for key in sorted(by_key, key=lambda k: tuple(str(x) for x in k)):
        values = by_key[key]
        base = values.get(baseline)
        table.append({"key": dict(zip(KEYS, key, strict=True)),
                      "values": [(p, values[p] / base if base and p in values else None,
                                  values.get(p)) for p in policies]})
    return policies, table
