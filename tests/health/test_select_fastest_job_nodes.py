"""Keep-the-fastest works on the job's own nodes only (issue 22, defects 1 and 2).

The trial: benchmark times of all 512 nodes uploaded as job 1, a 64-node job. The upload
took them, the preview offered "60 primary, 452 excluded" (keeping nodes job 2 holds),
recording said "kept 12, excluded 52" and left job 1 with 12 primaries, one of them
drained. And with correct input a drained node that was fastest was kept.
"""

from __future__ import annotations

import pytest

from allocation.models import Allocation, AllocationRole, NodeState
from allocation.services import jobs, machines
from health import maths
from health import services as health
from health.models import BenchmarkResult
from hxportal import hostlists

pytestmark = pytest.mark.django_db


@pytest.fixture
def hx(db):
    return machines.create_machine(name="hx", sides=[8, 8], concentration=8)


@pytest.fixture
def two_jobs(hx, users):
    """Job 1: 64 nodes (no spares), the operator's; job 2: 64 nodes, someone else's."""
    one = jobs.submit_job(owner=users["operator"], machine=hx, name="one", node_count=64,
                          pattern="all2all", policy="row")
    two = jobs.submit_job(owner=users["operator2"], machine=hx, name="two", node_count=64,
                          pattern="all2all", policy="row")
    return one, two


def held(job) -> list[str]:
    return list(job.allocations.filter(released_at__isnull=True).order_by("rank")
                .values_list("node__hostname", flat=True))


def all_node_times(hx, fast: set[str] = frozenset()) -> dict[str, float]:
    """A time for every node of the machine; ``fast`` nodes are the fastest."""
    names = list(hx.nodes.order_by("index").values_list("hostname", flat=True))
    return {name: (0.5 if name in fast else 1.0 + 0.001 * i) for i, name in enumerate(names)}


def test_upload_refuses_rows_for_nodes_outside_the_job_naming_them(api, hx, two_jobs):
    one, _ = two_jobs
    times = all_node_times(hx)
    results = [{"node": n, "seconds": s} for n, s in times.items()]
    response = api("admin").post("/api/v1/benchmarks/", {
        "job": one.pk, "benchmark": "stream", "results": results}, format="json")
    assert response.status_code == 400, response.content
    errors = response.json()["errors"]
    outside = [i for i, r in enumerate(results) if r["node"] not in set(held(one))]
    first = f"results[{outside[0]}].node"
    assert first in errors and f"is not a node of job {one.pk}" in errors[first][0]
    assert all(key.endswith(".node") for key in errors)
    assert not BenchmarkResult.objects.exists(), "nothing stored"
    # The job's own nodes alone are taken.
    own = [r for r in results if r["node"] in set(held(one))]
    ok = api("admin").post("/api/v1/benchmarks/", {
        "job": one.pk, "benchmark": "stream", "results": own}, format="json")
    assert ok.status_code == 201 and ok.json()["stored"] == 64


def test_csv_upload_names_every_row_outside_the_job(client_for, hx, two_jobs):
    one, two = two_jobs
    mine, theirs = held(one)[0], held(two)[:2]
    text = (f"job,benchmark,node,seconds\n{one.pk},stream,{mine},1.0\n"
            f"{one.pk},stream,{theirs[0]},1.0\n{one.pk},stream,{theirs[1]},1.1\n")
    response = client_for("operator").post("/benchmarks/upload/", {"text": text})
    assert response.status_code == 400
    rows = dict(response.context["row_errors"])
    assert set(rows) == {"row 3, node", "row 4, node"}
    assert f"{theirs[0]} is not a node of job {one.pk}" in rows["row 3, node"]


def store_directly(job, times: dict[str, float], benchmark: str = "stream") -> None:
    """Results as an older portal stored them, for nodes outside the job too."""
    nodes = dict(job.machine.nodes.values_list("hostname", "id"))
    BenchmarkResult.objects.bulk_create(
        BenchmarkResult(machine=job.machine, job=job, node_id=nodes[n], benchmark=benchmark,
                        seconds=s) for n, s in times.items())


def test_select_fastest_considers_only_the_jobs_own_nodes(hx, two_jobs):
    one, two = two_jobs
    theirs = set(held(two))
    store_directly(one, all_node_times(hx, fast=theirs))  # job 2's nodes are the fastest
    result = health.select_fastest(n_node=60, job=one, benchmark="stream")
    kept, dropped = set(hostlists.expand(result["keep"])), set(hostlists.expand(
        result["dropped"]))
    assert kept <= set(held(one)) and not kept & theirs
    assert kept | dropped == set(held(one)) and not kept & dropped
    assert (result["n_keep"], result["n_spare"], result["short"]) == (60, 4, 0)
    assert len(hostlists.expand(result["ignored"])) == 512 - 64


def test_preview_offers_and_records_exactly_the_jobs_selection(client_for, hx, two_jobs):
    one, two = two_jobs
    store_directly(one, all_node_times(hx, fast=set(held(two))))
    operator = client_for("operator")
    url = f"/jobs/{one.pk}/select-fastest/"
    preview = operator.get(url, {"benchmark": "stream", "n_node": 60})
    html = preview.content.decode()
    assert "Record: 60 primary, 4 excluded" in html
    result = preview.context["result"]
    form = {"benchmark": "stream", "n_node": 60, "keep": result["keep"],
            "dropped": result["dropped"]}
    refused = operator.post(url, form)  # 60 primaries for a 64-node job: not silently
    assert refused.status_code == 400
    assert "with 60 primary nodes of the 64 it needs" in refused.content.decode()
    assert set(Allocation.objects.filter(job=one).values_list("role", flat=True)) == {
        AllocationRole.PRIMARY}, "nothing recorded"
    done = operator.post(url, {**form, "allow_fewer": "on"}, follow=True)
    assert "60 primary nodes, 4 excluded" in done.content.decode()
    roles = dict(Allocation.objects.filter(job=one).values_list("node__hostname", "role"))
    assert sorted(n for n, r in roles.items() if r == "primary") == sorted(
        hostlists.expand(result["keep"]))
    assert sum(r == "excluded" for r in roles.values()) == 4
    assert not Allocation.objects.filter(job=two).exclude(role="primary").exists()


def test_recording_refuses_a_selection_that_changed_since_the_preview(client_for, hx,
                                                                       two_jobs):
    one, _ = two_jobs
    store_directly(one, {n: 1.0 + i / 100 for i, n in enumerate(held(one))})
    url = f"/jobs/{one.pk}/select-fastest/"
    preview = client_for("operator").get(url, {"benchmark": "stream", "n_node": 60})
    result = preview.context["result"]
    fastest = hostlists.expand(result["keep"])[0]
    machines.set_node_state(hx, fastest, NodeState.DRAINED, "ECC")
    response = client_for("operator").post(url, {
        "benchmark": "stream", "n_node": 60, "keep": result["keep"],
        "dropped": result["dropped"], "allow_fewer": "on"})
    assert response.status_code == 409
    assert "changed since the preview: nothing was recorded" in response.content.decode()
    assert not Allocation.objects.filter(job=one).exclude(role="primary").exists()


def test_a_drained_node_is_never_kept_however_fast(api, hx, users):
    """Defect 2: 8 + 2 nodes; the fastest is drained, two are slow: keep the 8 fastest
    that are up, drop the drained one and the slowest up node."""
    job = jobs.submit_job(owner=users["operator"], machine=hx, name="app", node_count=8,
                          pattern="all2all", policy="row", spares=2)
    nodes = held(job)
    drained, slow1, slow2 = nodes[0], nodes[1], nodes[2]
    times = {n: 1.0 for n in nodes}
    times.update({drained: 0.5, slow1: 1.4, slow2: 1.5})
    health.ingest_payload({"job": job.pk, "benchmark": "stream",
                           "results": [{"node": n, "seconds": s} for n, s in times.items()]})
    machines.set_node_state(hx, drained, NodeState.DRAINED, "ECC")
    response = api("operator").post("/api/v1/select-fastest/", {
        "job": job.pk, "benchmark": "stream", "record_roles": True}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    kept = set(hostlists.expand(body["keep"]))
    assert drained not in kept and slow1 in kept and len(kept) == 8
    assert set(hostlists.expand(body["dropped"])) == {drained, slow2}
    assert body["unavailable"] == drained and body["short"] == 0
    assert body["roles"] == {"primary": 8, "excluded": 2}
    roles = dict(job.allocations.values_list("node__hostname", "role"))
    assert roles[drained] == "excluded" and roles[slow1] == "primary"


def test_recording_fewer_primaries_than_the_job_needs_takes_the_operators_word(api, hx,
                                                                               users):
    job = jobs.submit_job(owner=users["operator"], machine=hx, name="app", node_count=8,
                          pattern="all2all", policy="row")
    nodes = held(job)
    health.ingest_payload({"job": job.pk, "benchmark": "stream",
                           "results": [{"node": n, "seconds": 1.0 + i / 100}
                                       for i, n in enumerate(nodes)]})
    machines.set_node_state(hx, nodes[0], NodeState.DRAINED, "ECC")
    body = {"job": job.pk, "benchmark": "stream", "record_roles": True}
    refused = api("operator").post("/api/v1/select-fastest/", body, format="json")
    assert refused.status_code == 400
    assert "allow_fewer" in refused.json()["errors"]
    assert not job.allocations.exclude(role="primary").exists()
    done = api("operator").post("/api/v1/select-fastest/", {**body, "allow_fewer": True},
                                format="json").json()
    assert done["short"] == 1 and done["n_keep"] == 7
    assert done["roles"] == {"primary": 7, "excluded": 1}


def test_record_selection_refuses_nodes_the_job_does_not_hold(hx, two_jobs):
    from django.core.exceptions import ValidationError

    one, two = two_jobs
    with pytest.raises(ValidationError) as refused:
        health.record_selection(one, hostlists.compress(held(one)[:63] + held(two)[:1]),
                                hostlists.compress(held(one)[63:]))
    assert f"is not held by job {one.pk}" in str(refused.value.message_dict["keep"])


def test_pure_selection_never_keeps_unavailable_nodes():
    times = {"a": 0.5, "b": 1.0, "c": 1.1, "d": 1.2}
    sel = maths.select_fastest(times, 3, unavailable={"a"})
    assert sel.keep == ["b", "c", "d"] and sel.dropped == ["a"] and sel.unavailable == ["a"]
    short = maths.select_fastest(times, 4, unavailable={"a"})
    assert short.keep == ["b", "c", "d"] and short.short == 1
