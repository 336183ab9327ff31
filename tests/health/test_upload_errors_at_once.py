"""Upload errors (issue 22, defect 6): every row's problems at once, on the page; a body
over the limit answers a page with the way back, not a raw JSON page."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from allocation.services import jobs
from health.models import BenchmarkResult

pytestmark = pytest.mark.django_db


@pytest.fixture
def job(machine, users):
    return jobs.submit_job(owner=users["operator"], machine=machine, name="app", node_count=8,
                           pattern="all2all", policy="row")


def four_problems(job) -> str:
    """A bad time (parse), a node outside the job and an unknown node (job and node
    checks), and a time in milliseconds among seconds (units): four stages."""
    own = list(job.allocations.order_by("rank").values_list("node__hostname", flat=True))
    return ("job,benchmark,node,seconds\n"
            f"{job.pk},stream,{own[0]},1.01\n"
            f"{job.pk},stream,{own[1]},fast\n"          # row 3: seconds
            f"{job.pk},stream,n64,1.02\n"               # row 4: not the job's node
            f"{job.pk},stream,zz01,1.00\n"              # row 5: not a node of the machine
            f"{job.pk},stream,{own[2]},1030\n"          # row 6: milliseconds among seconds
            f"{job.pk},stream,{own[3]},0.99\n")


def test_the_page_lists_all_four_problems_at_once_in_row_order(client_for, job):
    response = client_for("operator").post("/benchmarks/upload/", {"text": four_problems(job)})
    assert response.status_code == 400
    where = [w for w, _ in response.context["row_errors"]]
    assert where == ["row 3, seconds", "row 4, node", "row 5, node", "row 6, seconds"]
    html = response.content.decode()
    assert "4 problems; nothing was stored" in html
    assert not BenchmarkResult.objects.exists()


def test_the_api_answers_all_four_problems_at_once(api, job):
    response = api("operator").generic("POST", "/api/v1/benchmarks/", four_problems(job),
                                       content_type="text/csv")
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["row 3, seconds", "row 4, node",
                                               "row 5, node", "row 6, seconds"]


def test_json_problems_of_fields_and_nodes_come_together(api, job):
    response = api("operator").post("/api/v1/benchmarks/", {
        "job": job.pk, "benchmark": "stream", "results": [
            {"node": "n64", "seconds": 1.0}, {"node": "n01", "seconds": -1}]}, format="json")
    assert set(response.json()["errors"]) == {"results[0].node", "results[1].seconds"}


def test_a_body_over_the_limit_answers_a_page_with_the_way_back(client_for, settings):
    settings.HX_MAX_BODY_BYTES = 2_000
    upload = SimpleUploadedFile("big.csv", b"job,benchmark,node,seconds\n" + b"1,s,n01,1\n" * 400,
                                content_type="text/csv")
    response = client_for("operator").post("/benchmarks/upload/", {"file": upload},
                                           HTTP_REFERER="http://testserver/benchmarks/upload/")
    assert response.status_code == 413
    assert response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    assert 'data-testid="too-large"' in html and "Nothing was stored" in html
    assert 'href="http://testserver/benchmarks/upload/" data-testid="back"' in html
    assert 'data-testid="whoami"' in html, "the page knows who is signed in"


def test_the_api_still_answers_413_json(api, settings):
    settings.HX_MAX_BODY_BYTES = 100
    response = api("operator").generic("POST", "/api/v1/benchmarks/", "x" * 200,
                                       content_type="text/csv")
    assert response.status_code == 413 and "exceeds the limit" in response.json()["detail"]
