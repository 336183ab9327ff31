"""What the recommendation pages draw (chart specifications for
``static/hxportal/charts.js``, built on :mod:`hxportal.charts`)."""

from __future__ import annotations

from hxportal import charts
from hxportal.templatetags import hxformat
from recommendations.models import Recommendation


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
        charts.axis("N_spare", "nodes", zero=True),
        charts.axis("E[C]", "node-s", scale=charts.scale_for(
            [*cost, as_is] if as_is else cost)),
        [charts.line("E[C]", xs, cost)],
        hlines=[(as_is, f"As-is {hxformat.node_seconds(as_is)}")] if as_is else [],
        marks=[(best["n_spare"], best["expected_cost"],
                f"optimum N_spare = {best['n_spare']}")],
        filename=f"recommendation-{rec.pk}-curve")
