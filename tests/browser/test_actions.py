"""The actions that were API-only, end to end in a real browser: errors beside their
fields or rows, a success toast, and the rows changed."""

from __future__ import annotations

import pytest

from allocation.models import Allocation
from allocation.services import jobs, machines
from health.models import BenchmarkResult
from hxportal import hostlists
from simulation import services as simulations
from simulation.models import SimulationRun, Sweep
from tests.simulation.conftest import TINY

pytestmark = pytest.mark.django_db(transaction=True)


def toast(page) -> str:
    page.wait_for_selector("[data-testid=toasts] li")
    return page.locator("[data-testid=toasts]").inner_text()


@pytest.fixture
def allocated(make_user):
    owner = make_user("otto", "operator", password="pw-browser-123")
    machine = machines.create_machine(name="hx", sides=[4, 4], concentration=4)
    job = jobs.submit_job(owner=owner, machine=machine, name="bench", node_count=8,
                          pattern="uniform", policy="row", spares=2)
    names = list(job.allocations.order_by("rank").values_list("node__hostname", flat=True))
    return machine, job, names


def test_upload_benchmarks_then_keep_the_fastest(browser_page, login, allocated):
    _, job, names = allocated
    page = login(browser_page, "otto", "operator")
    page.goto(f"/jobs/{job.pk}/")
    page.click("text=Upload benchmark results…")
    bad = "job,benchmark,node,seconds\n" + f"{job.pk},stream,{names[0]},-1\n"
    page.fill("textarea[name=text]", bad)
    page.click("button:has-text('Upload')")
    page.wait_for_selector("[data-testid=row-errors]")
    assert "row 2, seconds" in page.locator("[data-testid=row-errors]").inner_text()
    assert BenchmarkResult.objects.count() == 0
    times = {n: 1.0 for n in names}
    times[names[3]] = 4.0
    times[names[5]] = 3.0
    good = "job,benchmark,node,seconds\n" + "".join(
        f"{job.pk},stream,{n},{s}\n" for n, s in times.items())
    page.fill("textarea[name=text]", good)
    page.click("button:has-text('Upload')")
    assert "Stored 10 benchmark times." in toast(page)
    assert BenchmarkResult.objects.filter(job=job).count() == 10

    page.click("[data-testid=upload-result] >> text=Keep the fastest…")
    page.wait_for_selector("[data-testid=selection]")
    dropped = set(hostlists.expand(page.locator("[data-testid=dropped]").inner_text()))
    assert dropped == {names[3], names[5]}
    grid = page.locator("[data-testid=selection-grid]")
    assert grid.locator(".node[data-role=excluded]").count() == 2
    assert page.locator("[data-testid=selection-times] tr[data-kept='0']").count() == 2
    page.click("[data-testid=record-selection]")
    assert "8 primary nodes, 2 excluded" in toast(page)
    roles = dict(Allocation.objects.filter(job=job).values_list("node__hostname", "role"))
    assert roles[names[3]] == roles[names[5]] == "excluded"
    assert page.locator("[data-testid=job-grid] .node[data-role=excluded]").count() == 2
    # The refused upload answers 400 (a refused form is a 400 since ce5e6c5): that one only.
    assert page.console_errors == [
        "Failed to load resource: the server responded with a status of 400 (Bad Request)"], \
        page.console_errors


def test_release_a_job_with_its_actual_run_time(browser_page, login, allocated):
    _, job, _ = allocated
    page = login(browser_page, "otto", "operator")
    page.goto(f"/jobs/{job.pk}/")
    form = page.locator("[data-testid=release-form]")
    form.locator("input[name=actual_runtime]").fill("-3")
    form.locator("button").click()
    page.wait_for_selector("[data-field=actual_runtime]")
    assert "Must be more than 0 s" in page.locator("[data-field=actual_runtime]").inner_text()
    job.refresh_from_db()
    assert job.status == "allocated"
    form = page.locator("[data-testid=release-form]")
    form.locator("select[name=status]").select_option("failed")
    form.locator("input[name=actual_runtime]").fill("5400")
    form.locator("button").click()
    assert f"Job {job.pk} failed after" in toast(page)
    job.refresh_from_db()
    assert job.status == "failed" and job.actual_runtime == 5400.0
    assert page.locator("[data-testid=actual-runtime]").inner_text() == "1.5 h" or \
        page.locator("[data-testid=actual-runtime]").is_visible()


def test_drain_with_a_reason_and_a_confirmation(browser_page, login, allocated):
    machine, job, names = allocated
    page = login(browser_page, "otto", "operator")
    page.goto("/machines/hx/")
    form = page.locator("[data-testid=state-form]")
    form.locator("input[name=hostlist]").fill(names[0])
    form.locator("select[name=state]").select_option("drained")
    form.locator("button").click()
    page.wait_for_selector("[data-field=reason]")
    assert "a reason is required" in page.locator("[data-field=reason]").inner_text()
    page.fill("input[name=reason]", "ECC errors")
    page.click("text=Review…")
    page.wait_for_selector("[data-testid=state-confirm]")
    assert f"job {job.pk}" in page.locator("[data-testid=confirm-jobs]").inner_text()
    assert machine.nodes.filter(state="drained").count() == 0
    page.click("[data-testid=confirm-state]")
    assert f"{names[0]} set to drained" in toast(page)
    cell = page.locator(f"[data-testid=switch-grid] .node[data-hostname={names[0]}]")
    assert cell.get_attribute("data-state") == "drained"
    assert cell.get_attribute("data-job") == str(job.pk)


def test_cancel_and_delete_a_simulation_and_a_sweep(browser_page, login, make_user):
    owner = make_user("otto", "operator", password="pw-browser-123")
    run = simulations.start_run(dict(TINY), user=owner)
    sweep = simulations.create_sweep(name="s", base=dict(TINY), parameters={"seed": [1, 2]},
                                     user=owner)
    page = login(browser_page, "otto", "operator")
    page.goto(f"/simulation/runs/{run.pk}/")
    page.click("[data-testid=cancel-run]")
    assert f"Simulation {run.pk} cancelled." in toast(page)
    page.click("[data-testid=delete-run]")
    page.wait_for_selector("[data-testid=confirm-delete]")
    assert SimulationRun.objects.filter(pk=run.pk).exists(), "nothing before the confirmation"
    page.click("[data-testid=confirm-delete-button]")
    assert f"Simulation {run.pk} deleted." in toast(page)
    assert not SimulationRun.objects.filter(pk=run.pk).exists()

    page.goto(f"/simulation/sweeps/{sweep.pk}/")
    page.click("[data-testid=cancel-sweep]")
    assert "2 unfinished runs cancelled" in toast(page)
    page.click("[data-testid=delete-sweep]")
    page.click("[data-testid=confirm-delete-button]")
    assert f"Sweep {sweep.pk} and its runs deleted." in toast(page)
    assert not Sweep.objects.filter(pk=sweep.pk).exists()
    assert not page.console_errors, page.console_errors


def test_admin_sets_the_site_default_policy(browser_page, login, settings, make_user):
    settings.HX_DEFAULT_POLICY = "diagonal"
    machines.create_machine(name="hx", sides=[4, 4], concentration=4)
    page = login(browser_page, "ada", "admin")
    page.click("nav >> text=Settings")
    assert page.locator("[data-testid=effective-policy]").inner_text() == "diagonal"
    page.select_option("select[name=default_policy]", "row")
    page.click("button:has-text('Save')")
    assert "Default policy: row (from the site setting)" in toast(page)
    assert page.locator("[data-testid=effective-policy]").inner_text() == "row"
    assert machines.default_policy() == "row"
    page.goto("/machines/hx/jobs/new/")
    assert page.locator("select[name=policy]").input_value() == "row"
    page.goto("/settings/")
    page.select_option("select[name=default_policy]", "")
    page.click("button:has-text('Save')")
    assert "from HX_DEFAULT_POLICY" in toast(page)
    assert machines.default_policy() == "diagonal"
    browser_page.context.clear_cookies()
    operator = login(browser_page, "otto", "operator")
    response = operator.goto("/settings/")
    assert response.status == 403
