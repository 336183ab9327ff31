"""Server-side SVG charts of simulation results (no scripts, no inline styles: the CSP).

Plain functions from result dictionaries or flat result rows
(:data:`simulation.services.RESULT_COLUMNS`) to SVG markup strings; every text
is escaped here, so templates may mark the output safe.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from html import escape
from typing import Any

PALETTE = ("#2459c7", "#d64545", "#3ba55d", "#e0a526", "#8e44ad", "#16a2b8", "#6b4f2a",
           "#7f8c8d", "#c0392b", "#2c3e50")
KEYS = ("scenario", "pattern", "ranks", "replicas", "routing", "vc_sets", "seed",
        "message_packets")


def _num(v: float) -> str:
    return f"{v:.1f}"


def heat_colour(u: float) -> str:
    """White (idle) through yellow to red (busy every cycle).

    >>> heat_colour(0.0), heat_colour(1.0)
    ('#ffffff', '#d62020')
    """
    u = min(max(float(u), 0.0), 1.0)
    if u < 0.5:
        t = u / 0.5
        r, g, b = 255, 255, round(255 * (1 - t) + 80 * t)
    else:
        t = (u - 0.5) / 0.5
        r, g, b = round(255 * (1 - t) + 214 * t), round(255 * (1 - t) + 32 * t), round(
            80 * (1 - t) + 32 * t)
    return f"#{r:02x}{g:02x}{b:02x}"


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


def heatmap_svg(result: dict[str, Any], cell: int = 40) -> str:
    """The switch grid, each switch coloured by the busiest of its outgoing links.

    Rows are the first coordinate, columns the others (C order, as the engine
    numbers switches); a switch holding endpoints of the first application is
    outlined.
    """
    config = result.get("config") or {}
    sides = list(config.get("sides") or [])
    if not sides:
        return ""
    rows = sides[0]
    cols = math.prod(sides[1:]) if len(sides) > 1 else 1
    util = switch_utilisation(result)
    conc = int(config.get("concentration") or 1)
    apps = result.get("apps") or []
    target = {e // conc for e in (apps[0].get("partition") or [])} if apps else set()
    pad, legend_h = 24, 34
    width = pad + cols * cell + 8
    height = pad + rows * cell + legend_h
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="heatmap" '
             f'data-testid="heatmap" viewBox="0 0 {width} {height}" role="img" '
             f'aria-label="Link utilisation per switch">']
    for r in range(rows):
        parts.append(f'<text x="2" y="{pad + r * cell + cell / 2 + 4:.0f}" '
                     f'class="axis">{r}</text>')
    for c in range(cols):
        parts.append(f'<text x="{pad + c * cell + cell / 2 - 4:.0f}" y="14" '
                     f'class="axis">{c}</text>')
    for s, u in enumerate(util):
        r, c = divmod(s, cols)
        outline = ' stroke="#17202c" stroke-width="2.5"' if s in target else \
            ' stroke="#c8d0da" stroke-width="1"'
        parts.append(
            f'<rect class="switch-cell" data-switch="{s}" data-max="{u["max"]:.4f}" '
            f'x="{pad + c * cell + 1}" y="{pad + r * cell + 1}" width="{cell - 2}" '
            f'height="{cell - 2}" fill="{heat_colour(u["max"])}"{outline}>'
            f'<title>switch {s} ({r},{c}): max {u["max"]:.1%}, mean {u["mean"]:.1%}'
            f'{" (target application)" if s in target else ""}</title></rect>')
    y = pad + rows * cell + 10
    for i in range(11):
        parts.append(f'<rect x="{pad + i * 18}" y="{y}" width="18" height="10" '
                     f'fill="{heat_colour(i / 10)}"/>')
    parts.append(f'<text x="{pad}" y="{y + 22}" class="axis">0%</text>')
    parts.append(f'<text x="{pad + 10 * 18}" y="{y + 22}" class="axis">100%</text>')
    parts.append("</svg>")
    return "".join(parts)


def _nice_max(v: float) -> float:
    if v <= 0:
        return 1.0
    exp = 10 ** math.floor(math.log10(v))
    for m in (1, 2, 2.5, 5, 10):
        if v <= m * exp:
            return m * exp
    return 10 * exp


def line_chart_svg(series: dict[str, list[tuple[float, float]]], *, x_label: str,
                   y_label: str, testid: str = "line-chart", width: int = 640,
                   height: int = 320) -> str:
    """One polyline per series (``label -> [(x, y)]``), axes and a legend."""
    points = [p for pts in series.values() for p in pts]
    if not points:
        return ""
    left, right, top, bottom = 64, 150, 16, 44
    xs = sorted({x for x, _ in points})
    x_min, x_max = xs[0], xs[-1]
    y_max = _nice_max(max(y for _, y in points))
    pw, ph = width - left - right, height - top - bottom

    def px(x: float) -> float:
        return left + (pw * (x - x_min) / (x_max - x_min) if x_max > x_min else pw / 2)

    def py(y: float) -> float:
        return top + ph * (1 - y / y_max)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-testid="{testid}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(y_label)} against '
           f'{escape(x_label)}">',
           f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" '
           f'stroke="#5b6673"/>',
           f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="#5b6673"/>']
    for i in range(5):
        y = y_max * i / 4
        out.append(f'<text x="{left - 6}" y="{py(y) + 4:.1f}" class="axis" '
                   f'text-anchor="end">{y:,.0f}</text>')
        out.append(f'<line x1="{left}" y1="{py(y):.1f}" x2="{left + pw}" y2="{py(y):.1f}" '
                   f'stroke="#e3e7ec"/>')
    for x in xs:
        out.append(f'<text x="{px(x):.1f}" y="{top + ph + 16}" class="axis" '
                   f'text-anchor="middle">{x:g}</text>')
    out.append(f'<text x="{left + pw / 2:.0f}" y="{height - 6}" class="axis" '
               f'text-anchor="middle">{escape(x_label)}</text>')
    out.append(f'<text x="12" y="{top + ph / 2:.0f}" class="axis" text-anchor="middle" '
               f'transform="rotate(-90 12 {top + ph / 2:.0f})">{escape(y_label)}</text>')
    for i, (label, pts) in enumerate(series.items()):
        colour = PALETTE[i % len(PALETTE)]
        pts = sorted(pts)
        coords = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
        out.append(f'<polyline class="series" data-series="{escape(label)}" fill="none" '
                   f'stroke="{colour}" stroke-width="2" points="{coords}"/>')
        for x, y in pts:
            out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{colour}">'
                       f'<title>{escape(label)}: {x:g} -> {y:,.0f}</title></circle>')
        ly = top + 14 + i * 18
        out.append(f'<rect x="{left + pw + 12}" y="{ly - 9}" width="12" height="10" '
                   f'fill="{colour}"/><text x="{left + pw + 30}" y="{ly}" '
                   f'class="axis">{escape(label)}</text>')
    out.append("</svg>")
    return "".join(out)


def bar_chart_svg(groups: list[tuple[str, list[tuple[str, float | None]]]],
                  series: Sequence[str], *, y_label: str, testid: str = "bar-chart",
                  width: int = 860, height: int = 320) -> str:
    """Grouped bars: ``[(group, [(series, value)])]``; a missing value leaves a gap."""
    values = [v for _, bars in groups for _, v in bars if v is not None]
    if not values:
        return ""
    left, right, top, bottom = 64, 210, 16, 44
    pw, ph = width - left - right, height - top - bottom
    y_max = _nice_max(max(values))
    group_w = pw / max(1, len(groups))
    bar_w = max(2.0, (group_w - 8) / max(1, len(series)))
    colour = {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(series)}
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-testid="{testid}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(y_label)}">',
           f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" '
           f'stroke="#5b6673"/>']
    for i in range(5):
        y = y_max * i / 4
        yy = top + ph * (1 - y / y_max)
        out.append(f'<text x="{left - 6}" y="{yy + 4:.1f}" class="axis" '
                   f'text-anchor="end">{y:,.0f}</text>')
        out.append(f'<line x1="{left}" y1="{yy:.1f}" x2="{left + pw}" y2="{yy:.1f}" '
                   f'stroke="#e3e7ec"/>')
    for g, (group, bars) in enumerate(groups):
        x0 = left + g * group_w + 4
        for s, value in bars:
            if value is None:
                continue
            i = list(series).index(s)
            h = ph * value / y_max
            out.append(f'<rect class="bar" data-group="{escape(group)}" '
                       f'data-series="{escape(s)}" x="{x0 + i * bar_w:.1f}" '
                       f'y="{top + ph - h:.1f}" width="{bar_w - 1:.1f}" height="{h:.1f}" '
                       f'fill="{colour[s]}"><title>{escape(group)}, {escape(s)}: '
                       f'{value:,.0f}</title></rect>')
        out.append(f'<text x="{x0 + group_w / 2 - 4:.1f}" y="{top + ph + 16}" class="axis" '
                   f'text-anchor="middle">{escape(group)}</text>')
    out.append(f'<text x="12" y="{top + ph / 2:.0f}" class="axis" text-anchor="middle" '
               f'transform="rotate(-90 12 {top + ph / 2:.0f})">{escape(y_label)}</text>')
    for i, s in enumerate(series):
        ly = top + 14 + i * 18
        out.append(f'<rect x="{left + pw + 12}" y="{ly - 9}" width="12" height="10" '
                   f'fill="{colour[s]}"/><text x="{left + pw + 30}" y="{ly}" '
                   f'class="axis">{escape(s)}</text>')
    out.append("</svg>")
    return "".join(out)


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
