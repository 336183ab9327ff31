"""The machine pages as an operator meets them, in a real browser."""

from __future__ import annotations

import pytest

from allocation import services

pytestmark = pytest.mark.django_db(transaction=True)


def test_anonymous_visitor_sees_only_the_login_page(browser_page):
    browser_page.goto("/machines/hx/")
    assert "/login/" in browser_page.url
    assert browser_page.locator("input[name=password]").is_visible()


def test_machine_grid_tooltips_and_state_colours(browser_page, login):
    machine = services.create_machine(name="hx", sides=[8, 8], concentration=8)
    services.set_node_state(machine, "hx[009-016]", "drained", "ECC")
    page = login(browser_page, "vera", "viewer")
    page.goto("/")
    page.get_by_role("link", name="hx", exact=True).click()
    page.wait_for_url("**/machines/hx/")
    grid = page.locator("[data-testid=switch-grid]")
    assert grid.locator(".switch").count() == 64
    assert grid.locator(".node").count() == 512
    assert grid.locator(".node.state-drained").count() == 8
    second = grid.locator(".switch[data-switch='1']")
    assert second.get_attribute("title") == "switch (0,1): hx[009-016]"
    box = grid.bounding_box()
    assert box and box["width"] > 300, "the grid is laid out by the stylesheet and script"
    assert "drained" in page.locator("[data-testid=state-hostlists]").inner_text()
    assert "Change node state" not in page.content(), "viewers get no operator form"
    assert not page.console_errors, page.console_errors


def test_three_dimensional_machine_has_a_plane_selector(browser_page, login):
    services.create_machine(name="h3", sides=[3, 4, 4], concentration=2)
    page = login(browser_page, "vera", "viewer")
    page.goto("/machines/h3/")
    select = page.locator("[data-testid=plane-select]")
    assert select.locator("option").count() == 3
    select.select_option("2")
    page.wait_for_url("**plane=2**")
    first = page.locator(".switch").first
    assert first.get_attribute("title").startswith("switch (2,0,0):")


def test_operator_drains_nodes_by_hostlist(browser_page, login):
    machine = services.create_machine(name="hx", sides=[4, 4], concentration=4)
    page = login(browser_page, "otto", "operator")
    page.goto("/machines/hx/")
    page.fill("input[name=hostlist]", "hx[01-04]")
    page.select_option("select[name=state]", "drained")
    page.fill("input[name=reason]", "fan failure")
    page.click("text=Apply")
    page.wait_for_selector(".messages")
    assert "hx[01-04] set to drained" in page.locator(".messages").inner_text()
    assert machine.nodes.filter(state="drained").count() == 4
    page.fill("input[name=hostlist]", "zz[1-2]")
    page.fill("input[name=reason]", "x")
    page.click("text=Apply")
    assert "unknown nodes" in page.locator(".error").first.inner_text()
