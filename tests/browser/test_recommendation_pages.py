"""Submit a job in the browser, watch the ranking arrive from a real worker, accept it."""

from __future__ import annotations

import pytest

from allocation.models import Job
from allocation.services import jobs, machines
from tests.workers import celery_worker, purge_broker

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]


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
        page.goto("/recommend/")
        page.select_option("select[name=machine]", "ref")
        page.fill("input[name=node_count]", "64")
        page.select_option("select[name=pattern]", "all2all")
        page.fill("input[name=t_cmpt]", "100")
        page.fill("input[name=t_comm]", "50")
        page.fill("input[name=p_abn]", "0.026")
        page.fill("input[name=alpha_abn]", "3.53")
        page.fill("input[name=t_bench]", "0.0167")
        page.click("button:has-text('Recommend')")
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
