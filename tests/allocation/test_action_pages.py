"""The API's actions as pages: benchmark upload, keep-the-fastest, release with the
actual run time, drain with a confirmation step, the site's default policy."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile

from allocation.models import Allocation, Job, Node
from allocation.services import jobs, machines
from health.models import BenchmarkResult
from hxportal import hostlists
from hxportal.validators import uploaded_text

pytestmark = pytest.mark.django_db


@pytest.fixture
def job(machine, users):
    """An allocated 8-node job of the operator on m4 (n01..n64), with 2 spares."""
    return jobs.submit_job(owner=users["operator"], machine=machine, name="bench",
                           node_count=8, pattern="uniform", policy="row", spares=2)


def csv_for(job, times: dict[str, float]) -> str:
    return "job,benchmark,node,seconds\n" + "".join(
        f"{job.pk},stream,{node},{s}\n" for node, s in times.items())


# ------------------------------------------------------------------ upload


def test_upload_pasted_csv_stores_and_says_so(client_for, job):
    names = list(job.allocations.values_list("node__hostname", flat=True))
    response = client_for("operator").post("/benchmarks/upload/", {
        "text": csv_for(job, {n: 1.0 + i / 100 for i, n in enumerate(names)})}, follow=True)
    html = response.content.decode()
    assert response.status_code == 200 and 'data-testid="upload-result"' in html
    assert "Stored 10 benchmark times." in html and 'class="messages toasts"' in html
    assert BenchmarkResult.objects.filter(job=job).count() == 10


def test_upload_json_and_csv_file(client_for, job):
    body = json.dumps({"job": job.pk, "benchmark": "dgemm",
                       "results": [{"node": "n01", "seconds": 2.0}]})
    node = job.allocations.first().node.hostname
    body = body.replace("n01", node)
    assert client_for("operator").post("/benchmarks/upload/", {"text": body}).status_code == 200
    upload = SimpleUploadedFile("t.csv", csv_for(job, {node: 1.5}).encode(), "text/csv")
    response = client_for("operator").post("/benchmarks/upload/", {"file": upload})
    assert response.status_code == 200 and "Stored 1 benchmark time." in response.content.decode()
    assert set(BenchmarkResult.objects.values_list("benchmark", flat=True)) == {"dgemm", "stream"}


def test_upload_lists_row_level_errors_and_stores_nothing(client_for, job):
    text = csv_for(job, {"n01": 1.0, "n02": -3, "n03": "abc"})
    response = client_for("operator").post("/benchmarks/upload/", {"text": text})
    html = response.content.decode()
    assert response.status_code == 400 and 'data-testid="row-errors"' in html
    assert "row 3, seconds" in html and "row 4, seconds" in html
    assert "nothing was stored" in html and BenchmarkResult.objects.count() == 0
    text = csv_for(job, {"n01": 1.0, "zz99": 1.0})
    html = client_for("operator").post("/benchmarks/upload/", {"text": text}).content.decode()
    assert "row 3, node" in html and "zz99 is not a node of machine m4" in html


def test_upload_field_errors_sit_next_to_their_fields(client_for, job):
    html = client_for("operator").post("/benchmarks/upload/", {"text": "{not json"}
                                       ).content.decode()
    assert 'data-field="text"' in html and "not valid JSON" in html
    html = client_for("operator").post("/benchmarks/upload/", {}).content.decode()
    assert "Choose a CSV file or paste CSV or JSON." in html


def test_upload_refuses_a_file_the_page_and_the_api_alike(client_for, api, job, settings):
    latin1 = "job,benchmark,node,seconds\n1,stré,n01,1.0\n".encode("latin-1")
    html = client_for("operator").post("/benchmarks/upload/", {
        "file": SimpleUploadedFile("b.csv", latin1)}).content.decode()
    assert 'data-field="file"' in html and "not UTF-8 text" in html
    response = api("operator").post("/api/v1/benchmarks/", {
        "file": SimpleUploadedFile("b.csv", latin1)}, format="multipart")
    assert response.status_code == 400 and response.json()["errors"] == {
        "file": ["not UTF-8 text"]}
    assert BenchmarkResult.objects.count() == 0
    settings.HX_MAX_BODY_BYTES = len(latin1) - 1  # behind the middleware's own body limit
    with pytest.raises(ValidationError) as refused:
        uploaded_text(SimpleUploadedFile("b.csv", latin1))
    assert refused.value.message_dict == {"file": ["larger than the upload limit"]}


def test_upload_is_for_operators_and_their_own_jobs(client_for, job):
    assert client_for("viewer").get("/benchmarks/upload/").status_code == 403
    node = job.allocations.first().node.hostname
    html = client_for("operator2").post("/benchmarks/upload/", {
        "text": csv_for(job, {node: 1.0})}).content.decode()
    assert "only its owner" in html and BenchmarkResult.objects.count() == 0
    assert client_for("admin").post("/benchmarks/upload/", {
        "text": csv_for(job, {node: 1.0})}).status_code == 200
    assert BenchmarkResult.objects.count() == 1


# ------------------------------------------------------------------ keep the fastest


@pytest.fixture
def benchmarked(job):
    from health import services as health

    names = list(job.allocations.order_by("rank").values_list("node__hostname", flat=True))
    times = {n: 1.0 for n in names}
    times[names[0]], times[names[1]] = 3.0, 2.5  # the two slowest are dropped
    health.ingest_csv(csv_for(job, times))
    return job, names


def test_select_fastest_preview_shows_kept_and_dropped(client_for, benchmarked):
    job, names = benchmarked
    response = client_for("viewer").get(f"/jobs/{job.pk}/select-fastest/?benchmark=stream"
                                        "&n_node=8")
    html = response.content.decode()
    assert response.status_code == 200 and 'data-testid="selection"' in html
    result = response.context["result"]
    assert set(hostlists.expand(result["dropped"])) == {names[0], names[1]}
    rows = {t["hostname"]: t["kept"] for t in response.context["times"]}
    assert rows[names[0]] is False and rows[names[1]] is False and sum(rows.values()) == 8
    assert 'data-testid="record-selection"' not in html, "viewers only preview"
    assert html.count('data-role="excluded"') == 2


def test_select_fastest_records_roles_for_the_owner(client_for, benchmarked):
    job, names = benchmarked
    form = {"benchmark": "stream", "n_node": 8}
    owner_page = client_for("operator").get(f"/jobs/{job.pk}/select-fastest/",
                                            form).content.decode()
    assert 'data-testid="record-selection"' in owner_page
    assert client_for("operator2").post(f"/jobs/{job.pk}/select-fastest/", form
                                        ).status_code == 404
    preview = client_for("operator").get(f"/jobs/{job.pk}/select-fastest/", form).context
    recorded = {**form, "keep": preview["result"]["keep"],
                "dropped": preview["result"]["dropped"]}  # what the record form carries
    response = client_for("operator").post(f"/jobs/{job.pk}/select-fastest/", recorded,
                                           follow=True)
    assert "8 primary nodes, 2 excluded" in response.content.decode()
    roles = dict(Allocation.objects.filter(job=job).values_list("node__hostname", "role"))
    assert roles[names[0]] == roles[names[1]] == "excluded"
    assert sum(r == "primary" for r in roles.values()) == 8


def test_select_fastest_errors_next_to_fields(client_for, benchmarked):
    job, _ = benchmarked
    html = client_for("operator").get(f"/jobs/{job.pk}/select-fastest/?benchmark=stream"
                                      "&n_node=99").content.decode()
    assert 'data-field="n_node"' in html and "1..10" in html


def test_select_fastest_without_results_says_what_to_do(client_for, job):
    html = client_for("operator").get(f"/jobs/{job.pk}/select-fastest/").content.decode()
    assert 'data-testid="no-benchmarks"' in html and "/benchmarks/upload/" in html


# ------------------------------------------------------------------ release


def test_release_with_actual_runtime(client_for, job):
    page = client_for("operator").get(f"/jobs/{job.pk}/").content.decode()
    assert 'name="actual_runtime"' in page and 'data-testid="release-form"' in page
    response = client_for("operator").post(f"/jobs/{job.pk}/release/", {
        "status": "completed", "actual_runtime": "3600"}, follow=True)
    assert "completed after 1 h" in response.content.decode() or \
        "completed after" in response.content.decode()
    job.refresh_from_db()
    assert job.status == "completed" and job.actual_runtime == 3600.0
    assert not Allocation.objects.filter(job=job, released_at__isnull=True).exists()


def test_release_errors_next_to_their_fields(client_for, job):
    response = client_for("operator").post(f"/jobs/{job.pk}/release/", {
        "status": "completed", "actual_runtime": "-5"})
    html = response.content.decode()
    assert response.status_code == 200 and 'data-field="actual_runtime"' in html
    assert "Must be more than 0 s" in html
    job.refresh_from_db()
    assert job.status == "allocated"
    jobs.finish_job(job)
    html = client_for("operator").post(f"/jobs/{job.pk}/release/", {
        "status": "completed"}, follow=True).content.decode()
    assert "already completed" in html
    assert client_for("operator2").post(f"/jobs/{job.pk}/release/", {}).status_code == 404


# ------------------------------------------------------------------ drain with confirmation


def test_drain_asks_for_confirmation_naming_the_jobs(client_for, job, machine):
    held = job.allocations.order_by("rank").first().node.hostname
    form = {"hostlist": f"{held},n64", "state": "drained", "reason": "fan failure"}
    html = client_for("operator").post("/machines/m4/nodes/state/", form).content.decode()
    assert 'data-testid="state-confirm"' in html and 'data-testid="confirm-jobs"' in html
    assert f"job {job.pk}" in html and 'name="confirmed" value="1"' in html
    assert Node.objects.filter(machine=machine, state="drained").count() == 0
    response = client_for("operator").post("/machines/m4/nodes/state/",
                                           {**form, "confirmed": "1"}, follow=True)
    assert "set to drained" in response.content.decode()
    assert set(Node.objects.filter(state="drained").values_list("hostname", flat=True)) == {
        held, "n64"}


def test_drain_needs_a_reason_shown_next_to_the_field(client_for, machine):
    html = client_for("operator").post("/machines/m4/nodes/state/", {
        "hostlist": "n01", "state": "drained", "reason": ""}).content.decode()
    assert 'data-field="reason"' in html and "a reason is required" in html
    assert 'data-testid="state-confirm"' not in html
    html = client_for("operator").get("/machines/m4/nodes/state/?hostlist=n05&state=down"
                                      ).content.decode()
    assert 'value="n05"' in html


# ------------------------------------------------------------------ site default policy


def test_site_default_policy_overrides_the_environment(client_for, settings, machine):
    settings.HX_DEFAULT_POLICY = "diagonal"
    assert machines.default_policy() == "diagonal"
    assert client_for("operator").get("/settings/").status_code == 403
    page = client_for("admin").get("/settings/").content.decode()
    assert 'data-testid="effective-policy">diagonal<' in page and "HX_DEFAULT_POLICY" in page
    response = client_for("admin").post("/settings/", {"default_policy": "row"}, follow=True)
    assert "Default policy: row (from the site setting)" in response.content.decode()
    assert machines.default_policy() == "row"
    form = client_for("operator").get("/machines/m4/jobs/new/").content.decode()
    assert '<option value="row" selected>' in form
    client_for("admin").post("/settings/", {"default_policy": ""})
    assert machines.default_policy() == "diagonal"


def test_site_default_policy_rejects_unknown_policies(client_for):
    html = client_for("admin").post("/settings/", {"default_policy": "nope"}).content.decode()
    assert 'data-field="default_policy"' in html
    with pytest.raises(Exception, match="unknown policy"):
        machines.set_site_settings(default_policy="nope")


def test_job_count_unchanged_by_previews(client_for, benchmarked):
    job, _ = benchmarked
    before = Job.objects.count()
    client_for("viewer").get(f"/jobs/{job.pk}/select-fastest/?benchmark=stream&n_node=8")
    assert Job.objects.count() == before
