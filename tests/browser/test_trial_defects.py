"""Issue 22 ("Trust on the floor") in the browser: what the trial's operators met.

``HX_SCREENSHOTS=DIR`` also writes screenshots of the pages at 1366, 800 and 390 px.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from allocation.services import jobs, machines
from hxportal.models import RunStatus
from recommendations import services as recommendations
from simulation import services as simulations
from simulation.models import SimulationRun, Sweep
from tests.browser.conftest import PASSWORD

pytestmark = pytest.mark.django_db(transaction=True)
WIDTHS = (1366, 800, 390)


def shoot(page, name: str) -> None:
    """Full-page screenshots at every width when HX_SCREENSHOTS names a directory."""
    target = os.environ.get("HX_SCREENSHOTS")
    if not target:
        return
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(Path(target) / f"{name}-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1366, "height": 900})


def test_the_ranking_table_and_its_why_column_fit_1366_px(browser_page, login, users):
    """Defect 8: the ranking table was 1,400 px wide; its "Why" column was cut off."""
    hx = machines.create_machine(name="hx", sides=[8, 8], concentration=8)
    for i, policy in enumerate(["row", "diagonal", "row", "diagonal"]):
        jobs.submit_job(owner=users["operator"], machine=hx, name=f"bg{i}", node_count=64,
                        pattern="all2all", policy=policy)
    rec, _ = recommendations.request_recommendation(
        user=users["operator"], machine=hx, node_count=64, pattern="all2all", t_cmpt=100.0,
        t_comm=50.0, p_abn=0.026, alpha_abn=3.53, t_bench=0.0167, simulate=False)
    page = login(browser_page, "vic", "viewer")
    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(f"/recommendations/{rec.pk}/")
    table = page.locator("[data-testid=ranking]")
    table.wait_for()
    assert table.evaluate("t => t.parentElement.scrollWidth <= t.parentElement.clientWidth"), \
        "the table needs no sideways scrolling"
    box = table.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 1366
    cells = page.locator("[data-testid=ranking] td.why")
    assert cells.count() == 8
    for i in range(cells.count()):
        cell = cells.nth(i).bounding_box()
        assert cell["x"] + cell["width"] <= 1366, f"Why column cut off: {cell}"
    header = page.locator("[data-testid=ranking] thead th").last.bounding_box()
    assert header["x"] + header["width"] <= 1366
    shoot(page, "recommendation")
    assert not page.console_errors, page.console_errors


def test_signed_out_api_docs_lead_to_the_login_page_and_back(browser_page, make_user):
    """Defect 9: a bad 401 with no way to the login page."""
    make_user("dora", "viewer", password=PASSWORD)
    page = browser_page
    page.goto("/api/docs/")
    page.wait_for_url(re.compile(r"/login/\?next=/api/docs/$"))
    page.fill("input[name=username]", "dora")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r"/api/docs/$"))
    page.locator(".swagger-ui .info").wait_for(timeout=20_000)


def test_the_sweep_progress_line_moves_as_one(browser_page, login, users):
    """Defect 7: "8/9 runs done (0 succeeded, 0 failed, 0 running, 9 pending)"."""
    sweep = simulations.create_sweep(
        name="nine", base={"sides": [2, 2], "concentration": 2, "ranks": 4,
                           "max_cycles": 1000}, parameters={"seed": list(range(9))},
        user=users["operator"])
    page = login(browser_page, "vic", "viewer")
    page.goto(f"/simulation/sweeps/{sweep.pk}/")
    text = page.locator("[data-testid=progress-text]")
    text.wait_for()
    SimulationRun.objects.filter(
        pk__in=list(sweep.runs.order_by("id").values_list("pk", flat=True)[:8])).update(
        status=RunStatus.SUCCEEDED)
    page.wait_for_function(
        "() => /8( of |\\/)9/.test(document.querySelector('[data-testid=progress-text]')"
        ".textContent)")
    line = page.locator("[data-testid=sweep-status] p").first.inner_text()
    assert "8 succeeded" in line and "1 pending" in line, line
    shoot(page, "sweep")


def test_the_reproduction_start_form_says_what_will_run(browser_page, login):
    """Defect 5: the button said 350 runs when 140 started."""
    page = login(browser_page, "opal", "operator")
    page.goto("/simulation/reproduction/")
    count = page.locator("[data-testid=reproduction-run-count]")
    assert count.inner_text() == "420 runs"
    page.fill("[data-testid=reproduction-seeds]", "1")
    page.wait_for_function("() => document.querySelector("
                           "'[data-testid=reproduction-run-count]').textContent === '140 runs'")
    page.fill("[data-testid=reproduction-ordering-seeds]", "16")  # 70 + 16 x 70
    page.wait_for_function("() => document.querySelector("
                           "'[data-testid=reproduction-run-count]').textContent === '1,190 runs'")
    page.fill("[data-testid=reproduction-ordering-seeds]", "33")
    page.wait_for_function("() => document.querySelector('[data-testid=reproduction-run-count]')"
                           ".textContent === 'no run: choose 1 to 32 ordering seeds'")
    page.fill("[data-testid=reproduction-ordering-seeds]", "")  # blank: as many as seeds
    page.wait_for_function("() => document.querySelector("
                           "'[data-testid=reproduction-run-count]').textContent === '140 runs'")
    assert "420" not in page.locator("[data-testid=reproduction-start]").inner_text()
    shoot(page, "reproduction")
    page.click("[data-testid=reproduction-start]")
    page.wait_for_url(re.compile(r"/simulation/reproduction/\?sweep=\d+$"))
    sweep = Sweep.objects.get()
    assert sweep.run_count == sweep.runs.count() == 140
    assert f"Started reproduction sweep {sweep.pk}: 140 runs." in page.content()


def test_a_too_large_upload_ends_on_a_page_with_the_way_back(browser_page, login, settings,
                                                             tmp_path):
    """Defect 6: a body over the limit ended on a raw JSON page with no way back."""
    settings.HX_MAX_BODY_BYTES = 4_000
    big = tmp_path / "times.csv"
    big.write_text("job,benchmark,node,seconds\n" + "1,stream,n01,1.0\n" * 600)
    page = login(browser_page, "opal", "operator")
    page.goto("/benchmarks/upload/")
    page.set_input_files("input[name=file]", str(big))
    page.click("[data-testid=upload-form] button[type=submit]")
    page.locator("[data-testid=too-large]").wait_for()
    assert "Nothing was stored" in page.locator("[data-testid=too-large]").inner_text()
    shoot(page, "too-large")
    page.click("[data-testid=back]")
    page.wait_for_url(re.compile(r"/benchmarks/upload/$"))
    page.locator("[data-testid=upload-form]").wait_for()


def test_sides_that_are_not_numbers_are_flagged_while_typing(browser_page, login):
    """Defect 4: sides 8,x started a run on a one-dimensional machine without warning."""
    page = login(browser_page, "opal", "operator")
    page.goto("/simulation/runs/new/")
    page.fill("input[name=sides]", "8,x")
    error = page.locator("[data-error-for=sides]")
    page.wait_for_function("() => document.querySelector('[data-error-for=sides]')"
                           ".textContent.includes('not a list of whole numbers')")
    page.click("form[data-validate-url] button[type=submit]")
    page.wait_for_load_state()
    assert "not a list of whole numbers" in error.inner_text()
    assert not SimulationRun.objects.exists()


def test_every_problem_of_a_bad_csv_is_listed_at_once(browser_page, login, users):
    """Defect 6: a bad CSV reported 2 of its 4 problems; the others came on resubmission."""
    machine = machines.create_machine(name="m4", sides=[4, 4], concentration=4,
                                      hostname_pattern="n{n:02d}")
    page = login(browser_page, "opal", "operator")
    from hxportal.models import User

    job = jobs.submit_job(owner=User.objects.get(username="opal"), machine=machine,
                          name="app", node_count=8, pattern="all2all", policy="row")
    own = list(job.allocations.order_by("rank").values_list("node__hostname", flat=True))
    page.goto("/benchmarks/upload/")
    page.fill("textarea[name=text]", (
        "job,benchmark,node,seconds\n"
        f"{job.pk},stream,{own[0]},1.01\n{job.pk},stream,{own[1]},fast\n"
        f"{job.pk},stream,n64,1.02\n{job.pk},stream,zz01,1.00\n"
        f"{job.pk},stream,{own[2]},1030\n{job.pk},stream,{own[3]},0.99\n"))
    page.click("[data-testid=upload-form] button[type=submit]")
    table = page.locator("[data-testid=row-errors]")
    table.wait_for()
    rows = table.locator("tbody tr")
    assert rows.count() == 4
    assert [rows.nth(i).locator("th").inner_text() for i in range(4)] == [
        "row 3, seconds", "row 4, node", "row 5, node", "row 6, seconds"]
    shoot(page, "upload-errors")


def test_keeping_fewer_nodes_than_the_job_needs_takes_a_tick(browser_page, login):
    """Defect 1: a job must never be left with fewer primaries than its node count
    without the operator saying so; a drained node is never kept (defect 2)."""
    from allocation.models import AllocationRole, NodeState
    from health import services as health
    from hxportal.models import User

    hx = machines.create_machine(name="hx", sides=[8, 8], concentration=8)
    page = login(browser_page, "opal", "operator")
    job = jobs.submit_job(owner=User.objects.get(username="opal"), machine=hx, name="app",
                          node_count=8, pattern="all2all", policy="row")
    nodes = list(job.allocations.order_by("rank").values_list("node__hostname", flat=True))
    health.ingest_payload({"job": job.pk, "benchmark": "stream", "results": [
        {"node": n, "seconds": 1.0 + i / 100} for i, n in enumerate(nodes)]})
    machines.set_node_state(hx, nodes[0], NodeState.DRAINED, "ECC")  # the fastest
    page.goto(f"/jobs/{job.pk}/select-fastest/?benchmark=stream")
    page.locator("[data-testid=short]").wait_for()
    assert page.locator("[data-testid=unavailable]").inner_text() == nodes[0]
    assert "Record: 7 primary, 1 excluded" in page.locator(
        "[data-testid=record-selection]").inner_text()
    shoot(page, "select-fastest-short")
    page.click("[data-testid=record-selection]")
    page.locator("[data-testid=record-errors]").wait_for()
    assert "with 7 primary nodes of the 8 it needs" in page.locator(
        "[data-testid=record-errors]").inner_text()
    assert not job.allocations.exclude(role=AllocationRole.PRIMARY).exists()
    page.check("[data-testid=allow-fewer]")
    page.click("[data-testid=record-selection]")
    page.wait_for_url(re.compile(rf"/jobs/{job.pk}/$"))
    assert "7 primary nodes, 1 excluded" in page.content()
    roles = dict(job.allocations.values_list("node__hostname", "role"))
    assert roles[nodes[0]] == AllocationRole.EXCLUDED


def test_the_calibration_status_line_moves_as_one_and_its_curves_follow(browser_page, login,
                                                                        users):
    """The calibration page moved its runs done while "0 answering, 0 s of simulation"
    and "No run at this load has finished yet" stayed as first drawn."""
    from tests.simulation.conftest import run_pending

    half = machines.create_machine(name="half", sides=[4, 4], concentration=4)
    jobs.submit_job(owner=users["admin"], machine=half, name="bg", node_count=32,
                    pattern="all2all", policy="row")
    calibration, _ = recommendations.start_calibration(half, axes={
        "patterns": ["all2all"], "sizes": [8, 16], "loads": [0.5], "seeds": [0],
        "policies": ["row", "diagonal", "random_switch"]})
    calibration = recommendations.prepare_calibration(calibration.pk)
    page = login(browser_page, "vic", "viewer")
    page.goto(f"/recommendations/calibrations/{calibration.pk}/")
    status = page.locator("[data-testid=calibration-progress] p").first
    assert "0 of 6 runs done, 0 answering, 0 s of simulation" in status.inner_text()
    page.locator("[data-testid=no-results]").wait_for()
    run_pending(SimulationRun.objects.filter(sweep_id=calibration.sweep_id,
                                             parameters__point__node_count=8))
    seconds = recommendations.refresh_calibration(calibration).run_seconds
    assert seconds > 0
    # the figures follow the same answer at once, the curves with the next drawing (10 s)
    page.wait_for_function(
        "() => /3 of 6 runs done, 3 answering, [0-9.]+ (s|min) of simulation/.test("
        "document.querySelector('[data-testid=calibration-progress] p').textContent"
        ".replace(/\\s+/g, ' '))", timeout=20_000)
    page.locator("[data-testid=no-results]").wait_for(state="detached", timeout=30_000)
    assert page.locator("canvas, [data-testid^=chart]").count() > 0
    assert "3 of 6 runs done, 3 answering" in " ".join(status.inner_text().split())
    assert not page.console_errors, page.console_errors
    shoot(page, "calibration-progress")
