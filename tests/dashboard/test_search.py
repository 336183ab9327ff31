"""The top bar's search: a job id opens the job, a host or a hostlist of one machine
opens its node list, anything else lists what matched; hostlists are read strictly
(never a shell, never node groups); jobs another user owns stay hidden with
HX_PRIVATE_DATA."""

from __future__ import annotations

from urllib.parse import unquote

import pytest
from django.test import Client

from allocation.services import jobs, machines

pytestmark = pytest.mark.django_db


@pytest.fixture
def viewer(users) -> Client:
    client = Client()
    client.force_login(users["viewer"])
    return client


def test_a_job_id_opens_the_job(machine, users, viewer):
    job = jobs.create_job(owner=users["operator"], machine=machine, name="a", node_count=4,
                          pattern="uniform")
    for q in (str(job.pk), f"#{job.pk}", f"job {job.pk}", f"JOB:{job.pk}"):
        response = viewer.get("/search/", {"q": q})
        assert response.status_code == 302 and response["Location"] == f"/jobs/{job.pk}/", q


def test_a_slurm_job_id_finds_the_synced_job(machine, users, viewer):
    job = jobs.create_job(owner=users["operator"], machine=machine, name="s", node_count=4,
                          pattern="uniform")
    type(job).objects.filter(pk=job.pk).update(slurm_job_id=777001, source="slurm")
    assert viewer.get("/search/", {"q": "777001"})["Location"] == f"/jobs/{job.pk}/"


def test_a_host_or_a_hostlist_of_one_machine_opens_its_node_list(machine, viewer):
    response = viewer.get("/search/", {"q": "n05"})
    assert response.status_code == 302
    assert unquote(response["Location"]) == "/machines/m4/nodes/?hostlist=n05"
    response = viewer.get("/search/", {"q": "n[01-04],n09"})
    assert unquote(response["Location"]) == "/machines/m4/nodes/?hostlist=n[01-04,09]"
    assert viewer.get(response["Location"]).status_code == 200


def test_hosts_on_two_machines_or_unknown_are_listed(machine, viewer):
    machines.create_machine(name="m2", sides=[2, 2], concentration=2,
                            hostname_pattern="x{n}")
    html = viewer.get("/search/", {"q": "n01,x1,ghost7"}).content.decode()
    assert 'data-testid="search-nodes"' in html and "m4" in html and "m2" in html
    assert 'data-testid="search-missing"' in html and "ghost7" in html
    html = viewer.get("/search/", {"q": "ghost[1-3]"}).content.decode()
    assert "No machine has" in html and "ghost[1-3]" in html


@pytest.mark.parametrize("q", ["@admins", "n[01-04]&n02", "$(reboot)", "n01;ls", "n[1-"])
def test_node_groups_operators_and_shell_text_are_refused(machine, viewer, q):
    response = viewer.get("/search/", {"q": q})
    assert response.status_code == 400
    assert 'data-testid="search-error"' in response.content.decode()


def test_a_hostlist_larger_than_any_machine_is_refused_before_expansion(machine, viewer):
    response = viewer.get("/search/", {"q": "n[1-999999]"})
    assert response.status_code == 400 and "more than 64" in response.content.decode()


def test_empty_query_explains(viewer):
    html = viewer.get("/search/").content.decode()
    assert 'data-testid="search-help"' in html and 'data-testid="search"' in html


def test_private_jobs_stay_hidden(settings, machine, users):
    settings.HX_PRIVATE_DATA = True
    job = jobs.create_job(owner=users["operator2"], machine=machine, name="theirs",
                          node_count=4, pattern="uniform")
    client = Client()
    client.force_login(users["operator"])
    response = client.get("/search/", {"q": str(job.pk)})
    assert response.status_code == 200 and "theirs" not in response.content.decode()
    client.force_login(users["admin"])
    assert client.get("/search/", {"q": str(job.pk)}).status_code == 302


def test_signed_out_search_goes_to_the_login_page():
    response = Client().get("/search/", {"q": "1"})
    assert response.status_code == 302 and response["Location"].startswith("/login/")
