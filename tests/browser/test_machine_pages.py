"""The machine pages as an operator meets them, in a real browser."""

from __future__ import annotations

import pytest

from allocation.services import machines

pytestmark = pytest.mark.django_db(transaction=True)


def test_anonymous_visitor_sees_only_the_login_page(browser_page):
    browser_page.goto("/machines/hx/")
    assert "/login/" in browser_page.url
    assert browser_page.locator("input[name=password]").is_visible()


def test_machine_grid_tooltips_and_state_colours(browser_page, login):
    machine = machines.create_machine(name="hx", sides=[8, 8], concentration=8)
    machines.set_node_state(machine, "hx[009-016]", "drained", "ECC")
    page = login(browser_page, "vera", "viewer")
    page.goto("/")
    page.get_by_role("link", name="hx", exact=True).click()
    page.wait_for_url("**/machines/hx/")
    grid = page.locator("[data-testid=switch-grid]")
    assert grid.locator(".switch").count() == 64
    assert grid.locator(".node").count() == 512
    assert grid.locator(".node[data-state=drained]").count() == 8
    second = grid.locator(".switch[data-switch='1']")
    assert second.get_attribute("title") == "switch (0,1): hx[009-016]"
    assert grid.locator(".axis.col").count() == 8 and grid.locator(".axis.row").count() == 8
    box = grid.bounding_box()
    assert box and box["width"] > 300, "the grid is laid out by the stylesheet and script"
    assert "drained" in page.locator("[data-testid=state-hostlists]").inner_text()
    assert "Change node state" not in page.content(), "viewers get no operator form"
    assert not page.console_errors, page.console_errors


def test_three_dimensional_machine_has_a_plane_selector(browser_page, login):
    machines.create_machine(name="h3", sides=[3, 4, 4], concentration=2)
    page = login(browser_page, "vera", "viewer")
    page.goto("/machines/h3/")
    select = page.locator("[data-testid=plane-select]")
    assert select.locator("option").count() == 3
    select.select_option("2")
    page.wait_for_url("**plane=2**")
    first = page.locator(".switch").first
    assert first.get_attribute("title").startswith("switch (2,0,0):")


def test_operator_drains_nodes_by_hostlist(browser_page, login):
    machine = machines.create_machine(name="hx", sides=[4, 4], concentration=4)
    page = login(browser_page, "otto", "operator")
    page.goto("/machines/hx/")
    page.fill("input[name=hostlist]", "hx[01-04]")
    page.select_option("select[name=state]", "drained")
    page.fill("input[name=reason]", "fan failure")
    page.click("text=Review…")
    page.wait_for_selector("[data-testid=state-confirm]")
    assert page.locator("[data-testid=confirm-hostlist]").inner_text() == "hx[01-04]"
    assert machine.nodes.filter(state="drained").count() == 0, "nothing before the confirmation"
    page.click("[data-testid=confirm-state]")
    page.wait_for_selector(".messages")
    assert "hx[01-04] set to drained" in page.locator(".messages").inner_text()
    assert machine.nodes.filter(state="drained").count() == 4
    page.fill("input[name=hostlist]", "zz[1-2]")
    page.fill("input[name=reason]", "x")
    page.click("text=Review…")
    assert "unknown nodes" in page.locator(".error").first.inner_text()


def test_a_drained_node_inside_a_job_is_visibly_distinct(browser_page, login, make_user):
    """Read the rendered cells: state on the border, job on the fill, spare glyph."""
    from allocation.services import jobs

    machine = machines.create_machine(name="hx", sides=[4, 4], concentration=4)
    job = jobs.submit_job(owner=make_user("ann", "operator"), machine=machine, name="j",
                          node_count=8, pattern="uniform", policy="row", spares=2)
    names = list(job.allocations.order_by("rank").values_list("node__hostname", flat=True))
    machines.set_node_state(machine, names[0], "drained", "ECC")
    machines.set_node_state(machine, names[1], "down", "dead")
    page = login(browser_page, "vera", "viewer")
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto("/machines/hx/")
    grid = page.locator("[data-testid=switch-grid]")
    style = """n => { const s = getComputedStyle(n), a = getComputedStyle(n, '::after'),
                      b = getComputedStyle(n, '::before');
                return {fill: s.backgroundColor, border: s.borderTopColor,
                        width: parseFloat(s.borderTopWidth), after: a.backgroundImage,
                        before: b.content}; }"""
    drained = grid.locator(f".node[data-hostname={names[0]}]").evaluate(style)
    down = grid.locator(f".node[data-hostname={names[1]}]").evaluate(style)
    healthy = grid.locator(f".node[data-hostname={names[2]}]").evaluate(style)
    free = grid.locator(".node[data-role=free]").first.evaluate(style)
    spare = grid.locator(".node[data-role=spare]").first.evaluate(style)
    assert grid.locator(f".node[data-hostname={names[0]}]").get_attribute("data-job") == \
        str(job.pk)
    # Same job fill, different state border.
    assert drained["fill"] == healthy["fill"] != free["fill"]
    assert drained["border"] == "rgb(224, 165, 38)" and drained["width"] >= 2
    assert down["border"] == "rgb(214, 69, 69)" and "gradient" in down["after"]
    assert healthy["border"] not in (drained["border"], down["border"])
    assert spare["before"] not in ("none", "normal"), "spares carry a corner glyph"
    title = grid.locator(f".node[data-hostname={names[0]}]").get_attribute("title")
    assert names[0] in title and "drained: ECC" in title and f"job {job.pk}" in title
    # The legend is on screen next to the grid at 1366x768, and so is the whole grid.
    legend = page.locator("[data-testid=switch-grid-legend]").bounding_box()
    box = grid.bounding_box()
    assert legend["y"] + 40 < 768 and legend["x"] > box["x"] + box["width"] - 1
    assert box["y"] + box["height"] <= 768, box
    assert "1 of 1" not in page.locator("[data-testid=legend-state-drained]").inner_text()
    assert not page.console_errors, page.console_errors
