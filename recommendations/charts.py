"""What the recommendation pages draw (chart specifications for
``static/hxportal/charts.js``, built on :mod:`hxportal.charts`)."""

from __future__ import annotations

from hxportal import charts
from hxportal.templatetags import hxformat
from recommendations.constants import BASELINE_POLICY
from recommendations.models import Calibration, Recommendation


def recommendation_curve(rec: Recommendation) -> dict | None:
    """E[C] against N_spare for the recommended policy, As-is and the optimum."""
    curve = rec.recommended.get("curve") or []
    if not curve:
        return None
    best = rec.recommended
    xs = [p["n_spare"] for p in curve]
    cost = [p["expected_cost"] for p in curve]
    as_is = next((e.get("as_is_cost") for e in rec.ranking
                  if e.get("policy") == best["policy"]), None)
    return charts.xy_chart(
        "recommendation-curve",
        f"Expected node-time E[C] against N_spare ({best['policy']})",
        charts.axis("N_spare", "nodes", zero=True, integer=True),
        charts.axis("E[C]", "node-s", scale=charts.scale_for(
            [*cost, as_is] if as_is else cost)),
        [charts.line("E[C]", xs, cost)],
        hlines=[(as_is, f"As-is {hxformat.node_seconds(as_is)}")] if as_is else [],
        marks=[(best["n_spare"], best["expected_cost"],
                f"optimum N_spare = {best['n_spare']}")],
        filename=f"recommendation-{rec.pk}-curve")


def calibration_charts(calibration: Calibration, load: float) -> list[dict]:
    """Per calibrated pattern: each policy's completion time relative to the baseline
    policy against the job size, at ``load`` (what a recommendation interpolates)."""
    cells = (calibration.table or {}).get("cells", {})
    spreads = (calibration.table or {}).get("spread", {})
    out = []
    for pattern in sorted(cells):
        rows = cells[pattern].get(repr(float(load))) or {}
        spread = (spreads.get(pattern) or {}).get(repr(float(load))) or {}
        sizes = sorted(int(n) for n in rows)
        if not sizes:
            continue
        policies = sorted({p for v in rows.values() for p in v})
        series = []
        for i, policy in enumerate(policies):
            ys = [_relative(rows[str(n)], policy) for n in sizes]
            ranges = [(spread.get(str(n)) or {}).get(policy) for n in sizes]
            if any(r is not None for r in ranges):  # two seeds: the mean -+ half their range
                lows = [y * (1 - r / 2) if y and r is not None else None
                        for y, r in zip(ys, ranges, strict=True)]
                highs = [y * (1 + r / 2) if y and r is not None else None
                         for y, r in zip(ys, ranges, strict=True)]
                series.append(charts.band(f"{policy}: seeds' range", sizes, lows, highs,
                                          colour=i, legend=False))
            series.append(charts.line(policy, sizes, ys, colour=i, points=True))
        out.append(charts.xy_chart(
            f"calibration-{pattern}",
            f"{pattern} at {load:.0%} load: completion time relative to {BASELINE_POLICY}"
            + (" (shaded: the range of its seeds)" if spread else ""),
            charts.axis("job size", "nodes", scale="log"),
            charts.axis(f"time / {BASELINE_POLICY}", "×"),
            series, hlines=[(1.0, BASELINE_POLICY)],
            filename=f"calibration-{calibration.pk}-{pattern}-load-{load:g}"))
    return out


def _relative(cell: dict[str, float], policy: str) -> float | None:
    reference = cell.get(BASELINE_POLICY)
    value = cell.get(policy)
    return value / reference if value and reference else None
