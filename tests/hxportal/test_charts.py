"""Chart specifications (hxportal/charts.py): what the pages hand to charts.js."""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import pytest

from hxportal import charts

ROOT = Path(__file__).resolve().parents[2]


def test_doctests():
    assert doctest.testmod(charts).failed == 0


def test_every_axis_names_its_unit():
    with pytest.raises(ValueError, match="needs a unit"):
        charts.axis("makespan", "")
    assert charts.axis("E[C]", "node-s")["title"] == "E[C] (node-s)"


def test_log_scale_only_when_values_span_decades():
    assert charts.scale_for([0.01, 5]) == "log"
    assert charts.scale_for([3, 9, 20]) == "linear"
    assert charts.scale_for([None, 1, 10_000]) == "log"
    assert charts.scale_for([]) == "linear"


def test_xy_chart_is_plain_json_without_non_finite_numbers():
    spec = charts.xy_chart(
        "c", "t", charts.axis("x", "s"), charts.axis("y", "count"),
        [charts.line("a", [1, 2, 3], [1.0, float("nan"), 3.0], highlight=[0, 1, 0]),
         charts.band("b", [1, 2], [0.1, 0.2], [0.3, 0.4])],
        hlines=[(2.0, "ref"), (None, "dropped")], marks=[(3, 3.0, "best")])
    text = json.dumps(spec, allow_nan=False)
    assert json.loads(text)["series"][0]["points"][1] == [2.0, None]
    assert spec["series"][0]["highlight"] == [False, True, False]
    assert [h["label"] for h in spec["hlines"]] == ["ref"]
    assert spec["script_id"] == "chart-data-c"


def test_histogram_bins_and_positions():
    edges, scale = charts.histogram_bins([1.0, 1.1, 1.2, 4.0], bins=6)
    assert scale == "linear" and edges[0] == 1.0 and edges[-1] == 4.0
    assert charts.bin_index(edges, 4.0) == 5 and charts.bin_index(edges, 1.0) == 0
    assert charts.fractional_position(edges, 1.0, scale) == pytest.approx(-0.5)
    assert charts.fractional_position(edges, 4.0, scale) == pytest.approx(5.5)
    edges, scale = charts.histogram_bins([0.01, 10.0], bins=3)
    assert scale == "log" and edges == [0.01, 0.1, 1.0, 10.0]


def test_one_chart_library_served_locally_and_no_svg_chart_code_left():
    vendor = ROOT / "static/vendor/chartjs-4.6.1"
    assert (vendor / "chart.umd.min.js").read_text().startswith("/*!\n * Chart.js v4.6.1")
    assert "MIT" in (vendor / "LICENSE.md").read_text()
    assert not (ROOT / "allocation/health_charts.py").exists()
    simulation_charts = (ROOT / "simulation/charts.py").read_text()
    assert "<svg" not in simulation_charts and "<polyline" not in simulation_charts
    for template in (ROOT / "templates").rglob("*.html"):
        text = template.read_text()
        assert "<svg" not in text, template
        assert "cdn" not in text.lower() or "drf_spectacular" in str(template), template
    scripts = (ROOT / "templates/inc/chart_scripts.html").read_text()
    assert "vendor/chartjs-4.6.1/chart.umd.min.js" in scripts
