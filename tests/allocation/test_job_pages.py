"""Job pages for each role (server-rendered; the browser tests cover the drawing)."""

from __future__ import annotations

import pytest

from allocation.models import Job
from allocation.services import jobs, machines

pytestmark = pytest.mark.django_db


@pytest.fixture
def hx(db):
    return machines.create_machine(name="hx", sides=[8, 8], concentration=8)


def signed_in(client, user):
    client.force_login(user)
    return client


@pytest.mark.parametrize(("role", "code"), [("viewer", 200), ("operator", 200), ("admin", 200)])
def test_read_pages_for_every_role(client, users, hx, role, code):
    job = jobs.submit_job(owner=users["operator"], machine=hx, name="a", node_count=64,
                          pattern="all-to-all", policy="diagonal")
    signed_in(client, users[role])
    for url in ["/jobs/", f"/jobs/{job.pk}/", "/machines/hx/", "/machines/hx/compare/?size=64"]:
        assert client.get(url).status_code == code, url


@pytest.mark.parametrize(("role", "code"), [("viewer", 403), ("operator", 200), ("admin", 200)])
def test_submit_page_needs_operator(client, users, hx, role, code):
    signed_in(client, users[role])
    assert client.get("/machines/hx/jobs/new/").status_code == code


def test_submit_form_allocates_and_grid_shows_the_job(client, users, hx):
    signed_in(client, users["operator"])
    response = client.post("/machines/hx/jobs/new/", {
        "name": "fft", "node_count": 64, "pattern": "all-to-all", "policy": "row", "seed": 0})
    job = Job.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/jobs/{job.pk}/"
    page = client.get("/machines/hx/").content.decode()
    assert page.count(f'data-job="{job.pk}"') == 64
    assert "job-legend" in page and "fft" in page


def test_submit_form_reports_infeasible_size(client, users, hx):
    signed_in(client, users["operator"])
    response = client.post("/machines/hx/jobs/new/", {
        "name": "huge", "node_count": 600, "pattern": "uniform", "policy": "row", "seed": 0})
    assert response.status_code == 400
    assert "only 512 nodes" in response.content.decode()
    assert not Job.objects.exists()


def test_release_only_own_job(client, users, hx):
    job = jobs.submit_job(owner=users["operator2"], machine=hx, name="b", node_count=8,
                          pattern="uniform", policy="row")
    signed_in(client, users["operator"])
    assert client.post(f"/jobs/{job.pk}/release/", {"status": "cancelled"}).status_code == 404
    signed_in(client, users["operator2"])
    assert client.post(f"/jobs/{job.pk}/release/", {"status": "cancelled"}).status_code == 302
    job.refresh_from_db()
    assert job.status == "cancelled"


def test_compare_page_shows_every_policy_and_highlights_the_best(client, users, hx):
    signed_in(client, users["viewer"])
    page = client.get("/machines/hx/compare/?size=64").content.decode()
    for policy in ("row", "diagonal", "full_spread", "rectangular", "l_shape",
                   "random_switch", "random_endpoint"):
        assert f'data-policy="{policy}"' in page
    full_spread = page[page.index('data-policy="full_spread"'):]
    assert '<td class="best">8.000</td>' in full_spread[:full_spread.index("</table>")]
    assert "must be" not in client.get("/machines/hx/compare/?size=64").content.decode()
    assert "Ensure this value is greater than" in client.get(
        "/machines/hx/compare/?size=0").content.decode()
    # The service's node_count refusal shows beside the page's own field, size.
    page = client.get("/machines/hx/compare/?size=600").content.decode()
    error = page.index('<span class="error">the machine has only 512 nodes</span>')
    assert page.index('id="id_size"') < error < page.index('id="id_seed"')


def test_job_list_pages_keep_every_filter(client, users, hx):
    Job.objects.bulk_create([Job(owner=users["operator"], machine=hx, name="j", node_count=1,
                                 pattern="unknown", status=status)
                             for status in ["failed", "cancelled", "completed"] * 20])
    signed_in(client, users["viewer"])
    page = client.get("/jobs/?status=failed&status=cancelled").content.decode()
    assert 'class="pager"' not in page  # 40 jobs: one page, no pager
    page = client.get("/jobs/?status=failed&status=cancelled&status=completed").content.decode()
    assert 'href="?status=failed&amp;status=cancelled&amp;status=completed&amp;page=2"' in page
