"""Chart specifications: the JSON a page hands to ``static/hxportal/charts.js``.

Pages never draw charts on the server. A view builds a plain dict with these
helpers, the template puts it in a ``json_script`` block through
``templates/inc/chart.html``, and the one chart module renders it with the
vendored Chart.js (``static/vendor/chartjs-4.6.1/``), with hover values, PNG and
CSV export and one size for every chart. Every axis names its unit; an axis
whose values span two decades or more is logarithmic (:func:`scale_for`).

Spec shape (every key JSON)::

    {"testid", "title", "kind": "xy" | "bar", "filename",
     "x": {"label", "unit", "scale": "linear" | "log" | "time" | "category", "zero",
           "min", "max" (optional: exact bounds), "integer" (optional: whole values)},
     "y": {...}, "categories": [...] (bar), "stacked": bool (bar),
     "series": [{"name", "style": "line" | "points" | "bar" | "band",
                 "points": [[x, y], ...] | [[x, low, high], ...] (band)
                 | "values": [...] (bar, one per category),
                 "colour": 0.., "highlight": [bool, ...], "role": "main"|"bad"|"ref"}],
     "hlines": [{"y", "label"}], "vlines": [{"x", "label"}], "marks": [{"x", "y", "label"}]}
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Sequence
from typing import Any

#: Decades an axis must span before it turns logarithmic.
LOG_DECADES = 2.0


def scale_for(values: Iterable[float | None], *, decades: float = LOG_DECADES) -> str:
    """``"log"`` when every value is positive and they span ``decades`` or more.

    >>> scale_for([1, 10, 1000]), scale_for([1, 50]), scale_for([0, 1000])
    ('log', 'linear', 'linear')
    """
    finite = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    if not finite or min(finite) <= 0:
        return "linear"
    return "log" if math.log10(max(finite) / min(finite)) >= decades else "linear"


def axis(label: str, unit: str, *, scale: str = "linear", zero: bool = False,
         bounds: tuple[float, float] | None = None, integer: bool = False) -> dict:
    """An axis; the unit is required (``"count"``, ``"s"``, ``"×"``, ``"nodes"``...).
    ``bounds``: a time axis spans exactly these values (a chosen range), not the data's
    rounded out to whole steps; a value axis spans at least them. ``integer``: the
    values are whole (spare nodes, copies), so no tick falls between two (a tick at
    N_spare = 0.5 names nothing)."""
    if not unit:
        raise ValueError(f"axis {label!r} needs a unit")
    out = {"label": label, "unit": unit, "scale": scale, "zero": zero,
           "title": f"{label} ({unit})"}
    if integer:
        out["integer"] = True
    if bounds is not None:
        out["min"], out["max"] = float(bounds[0]), float(bounds[1])
    return out


def _num(v: Any) -> float | None:
    if v is None:
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def line(name: str, xs: Sequence[float], ys: Sequence[float | None], *, colour: int = 0,
         points: bool = False, highlight: Sequence[bool] | None = None) -> dict:
    """A line (``points``: markers too) from paired values; None leaves a gap."""
    out = {"name": name, "style": "points" if points else "line", "colour": colour,
           "points": [[_num(x), _num(y)] for x, y in zip(xs, ys, strict=True)]}
    if highlight:
        out["highlight"] = [bool(h) for h in highlight]
    return out


def band(name: str, xs: Sequence[float], lows: Sequence[float | None],
         highs: Sequence[float | None], *, colour: int = 0, legend: bool = True) -> dict:
    """A shaded interval (e.g. a 95 % interval) under the series of the same colour
    (``legend``: listed in the chart's legend; off where its line already names it)."""
    out = {"name": name, "style": "band", "colour": colour,
           "points": [[_num(x), _num(lo), _num(hi)]
                      for x, lo, hi in zip(xs, lows, highs, strict=True)]}
    if not legend:
        out["legend"] = False
    return out


def bars(name: str, values: Sequence[float | None], *, colour: int = 0,
         role: str = "main") -> dict:
    return {"name": name, "style": "bar", "colour": colour, "role": role,
            "values": [_num(v) for v in values]}


def xy_chart(testid: str, title: str, x: dict, y: dict, series: list[dict], *,
             hlines: Iterable[tuple[float | None, str]] = (),
             marks: Iterable[tuple[float, float, str]] = (), filename: str = "") -> dict:
    """Lines, points and bands on numeric (or time) axes."""
    return {"testid": testid, "script_id": f"chart-data-{testid}", "title": title,
            "kind": "xy", "x": x, "y": y,
            "series": series, "filename": filename or testid,
            "hlines": [{"y": _num(v), "label": label} for v, label in hlines
                       if _num(v) is not None],
            "marks": [{"x": _num(mx), "y": _num(my), "label": label}
                      for mx, my, label in marks], "vlines": []}


def bar_chart(testid: str, title: str, x: dict, y: dict, categories: list[str],
              series: list[dict], *, stacked: bool = False,
              vlines: Iterable[tuple[float, str]] = (), filename: str = "") -> dict:
    """Bars per category (grouped, or ``stacked``); ``vlines`` at fractional category
    positions (0 = the first bar's centre)."""
    return {"testid": testid, "script_id": f"chart-data-{testid}", "title": title,
            "kind": "bar", "x": x, "y": y,
            "categories": [str(c) for c in categories], "series": series,
            "stacked": stacked, "filename": filename or testid, "hlines": [], "marks": [],
            "vlines": [{"x": float(v), "label": label} for v, label in vlines]}


def histogram_bins(values: Sequence[float], *, bins: int = 24
                   ) -> tuple[list[float], str]:
    """Bin edges for ``values``: geometric when they span two decades, else even.

    >>> histogram_bins([1.0, 2.0], bins=2)
    ([1.0, 1.5, 2.0], 'linear')
    >>> histogram_bins([1.0, 1000.0], bins=3)[0]
    [1.0, 10.0, 100.0, 1000.0]
    """
    lo, hi = min(values), max(values)
    if hi == lo:
        pad = abs(lo) * 0.05 or 0.5
        lo, hi = lo - pad, hi + pad
    scale = scale_for([lo, hi])
    if scale == "log":
        a, b = math.log10(lo), math.log10(hi)
        edges = [10 ** (a + (b - a) * i / bins) for i in range(bins + 1)]
        edges = [float(f"{e:.6g}") for e in edges]
    else:
        edges = [lo + (hi - lo) * i / bins for i in range(bins + 1)]
    return edges, scale


def bin_index(edges: Sequence[float], value: float) -> int:
    """The bin of ``value`` (the last bin includes its upper edge)."""
    i = bisect.bisect_right(edges, value) - 1
    return min(max(i, 0), len(edges) - 2)


def fractional_position(edges: Sequence[float], value: float, scale: str) -> float:
    """Where ``value`` falls on a category axis of bins (0 = centre of the first bin)."""
    i = bin_index(edges, value)
    lo, hi = edges[i], edges[i + 1]
    if scale == "log" and lo > 0 and value > 0:
        t = (math.log(value) - math.log(lo)) / (math.log(hi) - math.log(lo))
    else:
        t = (value - lo) / (hi - lo) if hi > lo else 0.5
    return i + min(max(t, 0.0), 1.0) - 0.5
