"""The simulation pages in a real browser: live validation, progress, results, charts."""

from __future__ import annotations

import pytest

from simulation import services
from simulation.models import SimulationRun
from tests.simulation.conftest import TINY, run_pending

pytestmark = pytest.mark.django_db(transaction=True)


def test_operator_submits_a_run_and_sees_results_and_heat_map(browser_page, login):
    page = login(browser_page, "otto", "operator")
    page.goto("/")
    page.get_by_role("link", name="Simulations").click()
    page.wait_for_url("**/simulation/")
    page.get_by_role("link", name="New run").click()
    page.wait_for_url("**/simulation/runs/new/")
    page.fill("input[name=sides]", "4,4")
    page.fill("input[name=concentration]", "4")
    page.select_option("select[name=pattern]", "all2all")
    page.fill("input[name=ranks]", "999")
    page.locator("[data-error-for=ranks]").filter(has_text="exceed the 64 endpoints").wait_for()
    page.fill("input[name=ranks]", "16")
    page.fill("textarea[name=extra]", '{"colour": 1}')
    page.locator("[data-error-for=extra]").filter(has_text="colour").wait_for()
    page.fill("textarea[name=extra]", '{"input_buffer_packets": 1000000}')
    page.locator("[data-error-for=extra]").filter(
        has_text="input_buffer_packets: the run would need at least").wait_for()
    page.fill("textarea[name=extra]", "")
    page.locator("[data-testid=validation-summary]").filter(has_text="OK:").wait_for()
    assert "MiB of memory" in page.locator("[data-testid=validation-summary]").inner_text()
    assert page.locator("[data-error-for=ranks]").inner_text().strip() == ""
    page.click("[data-testid=run-form] button[type=submit]")
    page.wait_for_url("**/simulation/runs/*/")
    run = SimulationRun.objects.get()
    assert page.locator("[data-testid=status]").inner_text() == "pending"
    assert run.config["ranks"] == 16 and run.config["sides"] == [4, 4]
    services.execute_run(run.pk)  # the worker's job, done here; the page polls the API
    page.locator("[data-testid=results]").wait_for(timeout=20_000)
    assert page.locator("[data-testid=status]").inner_text() == "succeeded"
    run.refresh_from_db()
    assert page.locator("[data-testid=makespan]").inner_text() == \
        f"{run.result['makespan_cycles']:,}"
    heatmap = page.locator("[data-testid=heatmap]")
    assert heatmap.locator(".switch-cell").count() == 16
    box = heatmap.bounding_box()
    assert box and box["width"] > 100
    assert not page.console_errors, page.console_errors


def test_sweep_page_shows_progress_charts_and_downloads(browser_page, login):
    sweep = services.create_sweep(
        name="mini", base=TINY,
        parameters={"policy": ["row", "diagonal"], "scenario": ["escalation", "interference"],
                    "replicas": [1, 2]})
    page = login(browser_page, "vera", "viewer")
    page.goto(f"/simulation/sweeps/{sweep.pk}/")
    assert "0 of 8 runs done" in page.locator("[data-testid=progress-text]").inner_text()
    run_pending(sweep.runs.all())
    page.locator("[data-testid=escalation-chart]").wait_for(timeout=20_000)
    assert "8 of 8 runs done" in page.locator("[data-testid=progress-text]").inner_text()
    escalation = page.locator("figure[data-testid=escalation-chart][data-rendered='1']")
    assert escalation.evaluate("f => f.hxChart.data.datasets.length") == 2
    bars = page.locator("figure[data-testid=interference-chart][data-rendered='1']")
    assert bars.evaluate("f => f.hxChart.data.datasets.length") == 4
    with page.expect_download() as png:
        escalation.locator("[data-chart-png]").click()
    assert png.value.suggested_filename == "escalation.png"
    with page.expect_download() as data:
        escalation.locator("[data-chart-csv]").click()
    assert data.value.suggested_filename == "escalation.csv"
    lines = open(data.value.path()).read().splitlines()
    assert lines[0] == "series,replicas (copies),makespan (cycles),low,high" and len(lines) == 5
    page.select_option("select[name=baseline]", "row")
    page.wait_for_url("**baseline=row**")
    assert "normalised to row" in page.content()
    with page.expect_download() as download:
        page.click("[data-testid=csv]")
    assert download.value.suggested_filename == f"sweep-{sweep.pk}.csv"
    assert not page.console_errors, page.console_errors
