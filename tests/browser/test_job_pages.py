"""Allocating a job and comparing policies, as an operator does it in a browser."""

from __future__ import annotations

import pytest

from allocation.models import Job
from allocation.services import jobs, machines

pytestmark = pytest.mark.django_db(transaction=True)


def test_operator_allocates_a_job_and_sees_it_on_the_grid(browser_page, login):
    machines.create_machine(name="hx", sides=[8, 8], concentration=8)
    page = login(browser_page, "otto", "operator")
    page.goto("/machines/hx/")
    page.click("text=Allocate a job")
    page.fill("input[name=name]", "lattice")
    page.fill("input[name=node_count]", "64")
    page.select_option("select[name=pattern]", "stencil4")
    page.select_option("select[name=policy]", "diagonal")
    page.click("button:has-text('Allocate')")
    page.wait_for_selector("[data-testid=properties]")
    job = Job.objects.get()
    assert page.url.endswith(f"/jobs/{job.pk}/")
    assert "non-convex" in page.locator("[data-testid=properties]").inner_text()
    assert page.locator(f"[data-testid=job-grid] .node[data-job='{job.pk}'][data-role=primary]"
                        "[data-selected='1']").count() == 64

    page.goto("/machines/hx/")
    nodes = page.locator(f"[data-testid=switch-grid] a.node[data-job='{job.pk}']")
    assert nodes.count() == 64
    assert "lattice" in page.locator("[data-testid=job-legend]").inner_text()
    assert "lattice" in nodes.first.get_attribute("title")
    nodes.first.click()
    page.wait_for_url(f"**/jobs/{job.pk}/")
    page.select_option("select[name=status]", "completed")
    page.fill("input[name=actual_runtime]", "120")
    page.click("button:has-text('Release')")
    page.wait_for_selector(".messages")
    job.refresh_from_db()
    assert job.status == "completed" and job.actual_runtime == 120.0
    assert not page.console_errors, page.console_errors


def test_compare_page_draws_seven_candidates_on_live_occupancy(browser_page, login, make_user):
    machine = machines.create_machine(name="hx", sides=[8, 8], concentration=8)
    jobs.submit_job(owner=make_user("ann", "operator"), machine=machine, name="resident",
                    node_count=128, pattern="uniform", policy="row")
    page = login(browser_page, "vera", "viewer")
    page.goto("/machines/hx/compare/")
    page.fill("input[name=size]", "64")
    page.click("button:has-text('Compare')")
    panels = page.locator("[data-testid=compare-panels] .panel")
    panels.first.wait_for()
    assert panels.count() == 8
    for i in range(8):
        panel = panels.nth(i)
        assert panel.locator(".node[data-role=candidate][data-selected='1']").count() == 64
        assert panel.locator(".node[data-role=held]").count() == 128
    assert page.locator("[data-testid^=compare-grid-][data-testid$=-legend]").count() == 1
    full_spread = page.locator(".panel[data-policy=full_spread]")
    assert full_spread.locator("td.best").first.inner_text() != ""
    assert not page.console_errors, page.console_errors
