"""Node health and the spare calculator as operators and viewers meet them, in a browser."""

from __future__ import annotations

import os

import pytest

from allocation import health, tasks
from allocation.models import Node
from tests.allocation.test_health_spares import seed_history

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
    histogram = page.locator("svg[data-testid=histogram]")
    assert histogram.is_visible() and histogram.locator("rect.bar-abnormal").count() >= 1
    assert histogram.locator("line.threshold-line").count() == 1
    assert page.locator("svg[data-testid=p-abn-stream] polygon.band").count() == 1
    candidates = page.locator("[data-testid=drain-candidates]")
    assert "n01" in candidates.inner_text() and "n02" in candidates.inner_text()
    shot(page, "health-machine")

    grid.locator("a.node[data-hostname=n01]").click()
    page.wait_for_selector("svg[data-testid=node-history]")
    assert "drain candidate" in page.locator("[data-testid=node-suspicion]").inner_text()
    assert page.locator("svg[data-testid=node-history] circle.hot").count() >= 3
    shot(page, "health-node")
    page.go_back()

    page.click("[data-testid=drain-n01]")
    page.wait_for_selector(".messages")
    assert "n01 drained (suspicion: " in page.locator(".messages").inner_text()
    node = Node.objects.get(machine=machine, hostname="n01")
    assert node.state == "drained" and "runs abnormal" in node.state_reason
    assert page.locator("[data-testid=drain-n01]").count() == 0
    assert page.locator("[data-testid=health-grid] a.node.not-up").count() == 1
    assert not page.console_errors, page.console_errors


def test_viewer_uses_the_spare_calculator(browser_page, login, machine):
    page = login(browser_page, "vera", "viewer")
    page.click("nav >> text=Spares")
    page.fill("input[name=n_node]", "100")
    page.fill("input[name=t_cmpt]", "10")
    page.fill("input[name=t_comm]", "5")
    page.fill("input[name=p_abn]", "0.005")
    page.fill("input[name=alpha_abn]", "10")
    page.fill("input[name=t_bench]", "0.1")
    page.click("text=Calculate")
    page.wait_for_selector("[data-testid=spares-result]")
    assert page.locator("[data-testid=n-spare]").inner_text() == "3"
    assert "saving 68.1%" in page.locator("[data-testid=saving]").inner_text()
    cost = page.locator("svg[data-testid=cost-curve]")
    assert cost.is_visible() and cost.locator("circle.optimum").count() == 1
    assert cost.locator("line.hline").count() == 1, "the As-is line"
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
