"""Submit a job in the browser, watch the ranking arrive from a real worker, accept it."""

from __future__ import annotations

import pytest

from allocation.models import Job
from allocation.services import jobs, machines
from tests.workers import celery_worker, purge_broker

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]


def ask(page, machine: str, node_count: int, **spare_model: str) -> None:
    """Submit an all-to-all of ``node_count`` nodes on the form (t_cmpt 100 s, t_comm
    50 s; p_abn, alpha_abn and t_bench if given)."""
    page.goto("/recommend/")
    page.select_option("select[name=machine]", machine)
    page.fill("input[name=node_count]", str(node_count))
    page.select_option("select[name=pattern]", "all2all")
    page.fill("input[name=t_cmpt]", "100")
    page.fill("input[name=t_comm]", "50")
    for field, value in spare_model.items():
        page.fill(f"input[name={field}]", value)
    page.click("button:has-text('Recommend')")


def test_submit_rank_accept_and_see_the_job_on_the_grid(browser_page, login, make_user,
                                                        tmp_path):
    machine = machines.create_machine(name="ref", sides=[8, 8], concentration=8)
    owner = make_user("resident", "operator")
    for i, policy in enumerate(["row", "diagonal", "row", "diagonal"]):
        jobs.submit_job(owner=owner, machine=machine, name=f"bg{i}", node_count=64,
                        pattern="all-to-all", policy=policy)
    purge_broker()
    with celery_worker(tmp_path / "worker.log", concurrency=2):
        page = login(browser_page, "otto", "operator")
        ask(page, "ref", 64, p_abn="0.026", alpha_abn="3.53", t_bench="0.0167")
        page.wait_for_selector("[data-testid=ranking]")
        page.wait_for_selector("[data-testid=accept]", timeout=90_000)
        assert page.locator("[data-testid=computing]").count() == 0
        rows = page.locator("[data-testid=ranking] tbody tr")
        assert rows.count() == 8
        assert "#SBATCH --nodes=" in page.locator("[data-testid=sbatch]").inner_text()
        assert page.locator("[data-testid=recommendation-curve]").count() == 1
        primary = page.locator("[data-testid=recommendation-grid] "
                               ".node[data-role=candidate][data-selected='1']")
        assert primary.count() == 64
        page.click("[data-testid=accept]")
        page.wait_for_selector("[data-testid=properties]")
    job = Job.objects.get(name="job", owner__username="otto")
    assert job.status == "allocated"
    page.goto("/machines/ref/")
    assert page.locator(f"a.node[data-job='{job.pk}']").count() >= 64
    assert not page.console_errors, page.console_errors


def test_a_close_call_is_settled_by_a_real_worker_and_the_page_says_so(
        browser_page, login, make_user, tmp_path, monkeypatch, settings):
    """A calibrated answer whose fastest policies the calibration cannot order: the page
    says which it simulates live, a real worker runs only those, and the answer that
    arrives says the close call was settled live, the other policies calibrated (each
    with how far its seeds lay apart)."""
    from recommendations import constants
    from recommendations import services as recommendations
    from recommendations.calibration import CalibrationTable, synthetic_occupancy
    from simulation import services as simulations
    from tests.browser.test_trial_defects import shoot
    from tests.recommendations.test_calibration import expected_close_call

    machine = machines.create_machine(name="half", sides=[4, 4], concentration=4)
    owner = make_user("resident", "operator")
    held = synthetic_occupancy(machine.geometry, 0.5)
    background = jobs.create_job(owner=owner, machine=machine, name="bg",
                                 node_count=held.size, pattern="all2all")
    jobs.allocate_candidate(background, jobs.Candidate(policy="row", seed=0,
                                                       endpoints=tuple(held.tolist())))
    calibration, _ = recommendations.start_calibration(machine, axes={
        "patterns": ["all2all"], "sizes": [8, 16, 32], "loads": [0.5], "seeds": [0, 1]})
    calibration = recommendations.prepare_calibration(calibration.pk)
    for run in calibration.sweep.runs.all():
        simulations.execute_run(run.pk)
    calibration = recommendations.refresh_calibration(calibration)
    table = CalibrationTable.from_dict(calibration.table)
    cycles, group = expected_close_call(table, 16, 0.5)
    settings.HX_PREDICTION_PROCESSES = 1  # all 16 runs in a row would not fit, the group's do
    monkeypatch.setattr(constants, "LIVE_DEADLINE_SHARE", table.run_seconds(
        "all2all", 16, 0.5) * (2 * len(group) + 1) / constants.DEADLINE_SECONDS)
    purge_broker()
    page = login(browser_page, "otto", "operator")
    ask(page, "half", 16)
    computing = page.wait_for_selector("[data-testid=computing]")
    assert "Simulating the policies the calibration cannot order" in computing.inner_text()
    assert all(p in computing.inner_text() for p in group)
    with celery_worker(tmp_path / "worker.log", concurrency=1):
        page.wait_for_selector("[data-testid=method][data-method=simulation]", timeout=90_000)
    method = page.locator("[data-testid=method]").inner_text()
    assert "settled by live simulation" in method
    calibrated = page.locator("[data-testid=calibrated-cycles]")
    assert calibrated.count() == len(cycles) - len(group)
    assert all(" apart" in calibrated.nth(i).inner_text() for i in range(calibrated.count()))
    shoot(page, "close-call-settled")
    assert not page.console_errors, page.console_errors
