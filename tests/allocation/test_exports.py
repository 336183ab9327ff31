"""CSV of the job and node lists: the pages' filters, every matching row, the role and
row rules of the pages, and no formula a spreadsheet would run."""

from __future__ import annotations

import csv
import io

import pytest
from django.test import Client

from allocation.services import history, jobs, machines
from allocation.usage import SyntheticJob
from allocation.views.exports import cell

pytestmark = pytest.mark.django_db


def rows(response) -> list[dict]:
    assert response.status_code == 200, response.content[:300]
    assert response["Content-Type"].startswith("text/csv")
    body = b"".join(response.streaming_content).decode()
    return list(csv.DictReader(io.StringIO(body)))


@pytest.fixture
def viewer(users) -> Client:
    client = Client()
    client.force_login(users["viewer"])
    return client


def test_job_csv_has_every_matching_job_with_filters(machine, users, viewer):
    owner = users["operator"]
    placed = jobs.submit_job(owner=owner, machine=machine, name="=HYPERLINK(1)", node_count=8,
                             pattern="uniform", policy="row")
    jobs.create_job(owner=owner, machine=machine, name="waiting", node_count=4,
                    pattern="uniform")
    history.record_synthetic(machine, [SyntheticJob(
        name=f"syn-{i}", user="alice", nodes=2, submit=1e9 + i, start=1e9 + i + 5,
        end=1e9 + i + 60, wall_time=3600.0, state="COMPLETED", exit_code=0)
        for i in range(120)])
    everything = rows(viewer.get("/jobs.csv"))
    assert len(everything) == 122, "not one page: every row"
    first = next(r for r in everything if r["id"] == str(placed.pk))
    assert first["name"] == "'=HYPERLINK(1)", "formula defused"
    assert first["primary_hostlist"] == "n[01-08]" and first["status"] == "allocated"
    synthetic = rows(viewer.get("/jobs.csv?source=demo"))
    assert len(synthetic) == 120 and {r["source"] for r in synthetic} == {"Synthetic (demo)"}
    assert synthetic[0]["slurm_user"] == "alice" and synthetic[0]["runtime_s"] == "55.0"
    assert len(rows(viewer.get("/jobs.csv?status=pending"))) == 1
    bad = viewer.get("/jobs.csv?status=maybe")
    assert bad.status_code == 400 and b"status" in bad.content


def test_job_csv_reads_only_own_jobs_with_private_data(settings, machine, users):
    settings.HX_PRIVATE_DATA = True
    jobs.create_job(owner=users["operator2"], machine=machine, name="theirs", node_count=4,
                    pattern="uniform")
    jobs.create_job(owner=users["operator"], machine=machine, name="mine", node_count=4,
                    pattern="uniform")
    client = Client()
    client.force_login(users["operator"])
    assert [r["name"] for r in rows(client.get("/jobs.csv"))] == ["mine"]


def test_node_csv_matches_the_node_list_filters(machine, users, viewer):
    jobs.submit_job(owner=users["operator"], machine=machine, name="a", node_count=8,
                    pattern="uniform", policy="row")
    machines.set_node_state(machine, "n[61-64]", "drained", "+fan")
    everything = rows(viewer.get("/machines/m4/nodes.csv"))
    assert len(everything) == 64 and everything[0]["hostname"] == "n01"
    assert everything[0]["held"] == "yes" and everything[0]["job"]
    drained = rows(viewer.get("/machines/m4/nodes.csv?state=drained"))
    assert [r["hostname"] for r in drained] == ["n61", "n62", "n63", "n64"]
    assert drained[0]["reason"] == "'+fan" and drained[0]["coords"] == "3,3"
    assert len(rows(viewer.get("/machines/m4/nodes.csv?hostlist=n[01-10]"))) == 10
    assert viewer.get("/machines/nope/nodes.csv").status_code == 404
    assert viewer.get("/machines/m4/nodes.csv?hostlist=@all").status_code == 400


def test_signed_out_csv_goes_to_the_login_page(machine):
    for url in ("/jobs.csv", "/machines/m4/nodes.csv"):
        response = Client().get(url)
        assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_csv_cells():
    assert cell("-3") == "-3" and cell("-x") == "'-x" and cell("@SUM(A1)") == "'@SUM(A1)"
    assert cell(None) == "" and cell(1.5) == "1.5"


def test_query_count_does_not_grow_with_rows(machine, users, viewer,
                                             django_assert_max_num_queries):
    history.record_synthetic(machine, [SyntheticJob(
        name=f"s{i}", user="u", nodes=1, submit=1e9, start=1e9, end=1e9 + 1,
        wall_time=60.0, state="COMPLETED", exit_code=0) for i in range(1500)])
    with django_assert_max_num_queries(8):
        assert len(rows(viewer.get("/jobs.csv"))) == 1500
