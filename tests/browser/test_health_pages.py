"""Node health and the spare calculator as operators and viewers meet them, in a browser."""

from __future__ import annotations

import os

import pytest

from allocation.models import Node
from health import services as health
from health import tasks
from tests.health.test_health_spares import seed_history

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SHOTS = os.environ.get("HX_SCREENSHOTS")  # a directory: save screenshots for review


def shot(page, name: str) -> None:
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, f"{name}.png"), full_page=True)


def test_operator_inspects_health_and_drains_a_suspect(browser_page, login, machine, users):
    seed_history(machine, users["operator"])
    run = health.start_estimation(machine)
    tasks.run_estimation.apply(args=[run.pk])
    page = login(browser_page, "otto", "operator")
    page.click("nav >> text=Health")
    page.click("[data-testid=health-machines] >> text=m4")
    grid = page.locator("[data-testid=health-grid]")
    assert grid.locator("a.node").count() == 64
    assert grid.locator("a.node.susp-suspect").count() == 2
    box = grid.bounding_box()
    assert box and box["width"] > 300, "the grid is laid out by the stylesheet and script"
    histogram = page.locator("figure[data-testid=histogram]")
    histogram.locator("canvas").wait_for()
    assert histogram.get_attribute("data-rendered") == "1", "charts.js drew it"
    datasets = histogram.evaluate("f => f.hxChart.data.datasets.map(d => [d.label, d.data])")
    assert [label for label, _ in datasets] == ["normal", "abnormal"]
    assert sum(v or 0 for v in datasets[1][1]) >= 1
    assert histogram.evaluate("f => f.hxChart.options.scales.y.type") == "logarithmic"
    p_abn = page.locator("figure[data-testid=p-abn-stream]")
    assert p_abn.evaluate("f => f.hxChart.data.datasets.filter(d => d.fill === '-1').length") == 1
    candidates = page.locator("[data-testid=drain-candidates]")
    assert "n01" in candidates.inner_text() and "n02" in candidates.inner_text()
    shot(page, "health-machine")

    grid.locator("a.node[data-hostname=n01]").click()
    page.wait_for_selector("figure[data-testid=node-history][data-rendered='1']")
    assert "drain candidate" in page.locator("[data-testid=node-suspicion]").inner_text()
    hot = page.locator("figure[data-testid=node-history]").evaluate(
        "f => f.hxChart.data.datasets[0].pointBackgroundColor.filter(c => c === '#d64545').length")
    assert hot >= 3
    shot(page, "health-node")
    page.go_back()

    page.click("[data-testid=drain-n01]")
    assert "suspicion: " in page.locator("[data-testid=drain-reason]").inner_text()
    page.click("[data-testid=confirm-drain]")
    page.wait_for_selector(".messages")
    assert "n01 drained (suspicion: " in page.locator(".messages").inner_text()
    node = Node.objects.get(machine=machine, hostname="n01")
    assert node.state == "drained" and "runs abnormal" in node.state_reason
    assert page.locator("[data-testid=drain-n01]").count() == 0
    assert page.locator("[data-testid=health-grid] a.node[data-state=drained]").count() == 1
    assert not page.console_errors, page.console_errors


REDRAW_SMALL_CURVE = """(f, keep) => {
  const source = document.getElementById(f.dataset.chart);
  const spec = JSON.parse(source.textContent);
  if (!spec.x.integer) return null;
  if (!keep) delete spec.x.integer;
  spec.series.forEach(s => { s.points = s.points.slice(0, 5).map((p, i) => [i, p[1]]); });
  spec.marks = [];
  source.textContent = JSON.stringify(spec);
  window.hx.renderCharts(f.parentElement);
  return f.hxChart.scales.x.ticks.map(t => t.value);
}"""


def x_ticks_redrawn(figure, *, keep_integer: bool) -> list[float]:
    """The x ticks of ``figure``'s chart drawn again from its own spec cut to
    N_spare = 0..4, with or without the spec's whole-values flag."""
    ticks = figure.evaluate(REDRAW_SMALL_CURVE, keep_integer)
    assert ticks, "the spec's N_spare axis does not say its values are whole"
    return ticks


def test_viewer_uses_the_spare_calculator(browser_page, login, machine):
    page = login(browser_page, "vera", "viewer")
    page.click("nav >> text=Spares")
    page.fill("input[name=n_node]", "100")
    page.fill("input[name=t_cmpt]", "10")
    page.fill("input[name=t_comm]", "5")
    page.fill("input[name=p_abn]", "0.005")
    page.fill("input[name=alpha_abn]", "10")
    page.fill("input[name=t_bench]", "0.1")
    page.check("input[name=hold_spares]")  # the study's worked case: spares held to the end
    page.click("text=Calculate")
    page.wait_for_selector("[data-testid=spares-result]")
    assert page.locator("[data-testid=n-spare]").inner_text() == "3"
    assert "stay with the job" in page.locator("[data-testid=release]").inner_text()
    assert "saving 68.1%" in page.locator("[data-testid=saving]").inner_text()
    cost = page.locator("figure[data-testid=cost-curve][data-rendered='1']")
    assert cost.is_visible()
    labels = cost.evaluate("f => f.hxChart.data.datasets.map(d => d.label)")
    assert labels[0] == "E[C]" and any(x.startswith("As-is") for x in labels)
    assert any(x.startswith("optimum N_spare = 3") for x in labels)
    # Whole spare nodes only. The page's own curve spans so many that Chart.js steps
    # by whole numbers anyway; drawn again over N_spare = 0..4 (a small job's curve),
    # its own steps are halves unless the axis says its values are whole.
    assert all(float(v).is_integer() for v in x_ticks_redrawn(cost, keep_integer=True))
    assert not all(float(v).is_integer() for v in x_ticks_redrawn(cost, keep_integer=False))
    shot(page, "spares")
    page.fill("input[name=p_abn]", "")
    page.click("text=Calculate")
    # The only machine is preselected, so blanks come from its estimate; it has none.
    assert page.locator("[data-field=machine]").inner_text().startswith(
        "machine m4 has no estimate")
    page.goto("/machines/m4/health/")
    assert page.locator("button[data-testid^=drain-]").count() == 0
    assert "Estimate now" not in page.content()
    assert not page.console_errors, page.console_errors
