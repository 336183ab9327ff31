"""Node-health API: roles, benchmark uploads (JSON and CSV), bad input, replace on re-post."""

from __future__ import annotations

import json

import pytest

from allocation.models import Job, Machine
from health import services as health
from health.models import BenchmarkResult
from health.services import parsing
from hxportal import services as accounts
from hxportal.models import TokenScope

pytestmark = pytest.mark.django_db

ROLES = [None, "viewer", "operator", "admin"]
RANK = {None: 0, "viewer": 1, "operator": 2, "admin": 3}


@pytest.fixture
def job(machine, users):
    return Job.objects.create(name="lammps", external_id="4242", owner=users["operator"],
                              machine=machine, node_count=8)


def upload(job_ref, times: dict[str, float], benchmark: str = "stream") -> dict:
    return {"job": job_ref, "benchmark": benchmark,
            "results": [{"node": n, "seconds": s} for n, s in times.items()]}


NORMAL = {f"n{i:02d}": 0.0167 + 0.0001 * (i % 3) for i in range(1, 11)}


def endpoints(job_id: int) -> list[tuple]:
    return [
        ("get", "/api/v1/benchmarks/", None, "viewer", 200),
        ("get", "/api/v1/benchmarks/?machine=m4&benchmark=stream&hostlist=n[01-04]&job=4242",
         None, "viewer", 200),
        ("post", "/api/v1/benchmarks/", upload(job_id, NORMAL), "operator", 201),
        ("get", "/api/v1/estimates/", None, "viewer", 200),
        ("get", "/api/v1/estimation-runs/", None, "viewer", 200),
        ("post", "/api/v1/estimation-runs/", {"machine": "m4", "window_days": 30},
         "operator", 202),
        ("post", "/api/v1/spares/", {"n_node": 100, "p_abn": 0.026, "alpha_abn": 3.53,
                                     "t_bench": 0.0167, "t_cmpt": 100}, "viewer", 200),
        ("post", "/api/v1/select-fastest/", {"times": {"n01": 1.0, "n02": 3.0}, "n_node": 1},
         "viewer", 200),
        ("get", "/api/v1/node-health/?machine=m4", None, "viewer", 200),
    ]


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("index", range(9))
def test_role_matrix(api, job, role, index):
    method, url, body, minimum, ok = endpoints(job.pk)[index]
    client = api(role)
    response = (getattr(client, method)(url, body, format="json") if body is not None
                else getattr(client, method)(url))
    if role is None:
        assert response.status_code == 401
    elif RANK[role] < RANK[minimum]:
        assert response.status_code == 403
    else:
        assert response.status_code == ok, response.content


@pytest.mark.parametrize("role", ROLES)
def test_estimate_and_run_detail_roles(api, job, role, users, machine):
    from django.utils import timezone

    from health.models import Estimate

    run = health.start_estimation(machine, user=users["operator"])
    now = timezone.now()
    estimate = Estimate.objects.create(
        machine=machine, benchmark="stream", window_start=now, window_end=now, runs=10,
        abnormal_runs=0, jobs=1, nodes=10, t_bench=0.0167, alpha_abn=None, p_abn=0.0,
        p_abn_low=0.0, p_abn_high=0.3, run=run)
    for url in (f"/api/v1/estimation-runs/{run.pk}/", f"/api/v1/estimates/{estimate.pk}/"):
        response = api(role).get(url)
        assert response.status_code == (401 if role is None else 200)
    for method in ("put", "patch", "delete"):
        response = getattr(api(role), method)(f"/api/v1/estimates/{estimate.pk}/", {},
                                              format="json")
        assert response.status_code == {None: 401, "viewer": 403, "operator": 403,
                                        "admin": 405}[role]


def test_benchmark_scoped_token_uploads_but_reads_nothing(job, users):
    from rest_framework.test import APIClient

    key = accounts.issue_token(users["operator"], "cluster", scope=TokenScope.BENCHMARKS)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.post("/api/v1/benchmarks/", upload("4242", NORMAL),
                       format="json").status_code == 201
    assert client.get("/api/v1/machines/").status_code == 403
    assert client.get("/api/v1/benchmarks/").status_code == 403
    assert client.get("/api/v1/estimates/").status_code == 403
    assert client.post("/api/v1/estimation-runs/", {"machine": "m4"},
                       format="json").status_code == 403
    selected = client.post("/api/v1/select-fastest/", {"job": "4242", "n_node": 8},
                           format="json")
    assert selected.status_code == 200, selected.content
    assert client.post("/api/v1/select-fastest/", {"job": "4242", "n_node": 8,
                                                   "record_roles": True},
                       format="json").status_code == 403


def test_json_upload_stores_and_repost_replaces(api, job):
    client = api("operator")
    first = client.post("/api/v1/benchmarks/", upload(job.pk, NORMAL), format="json")
    assert first.status_code == 201, first.content
    body = first.json()
    assert body["stored"] == 10 and body["replaced"] == 0
    assert body["groups"] == [{"job": job.pk, "round": None, "external_id": "4242", "machine": "m4",
                               "benchmark": "stream", "count": 10, "nodes": "n[01-10]"}]
    second = client.post("/api/v1/benchmarks/",
                         upload("4242", {"n01": 0.02, "n02": 0.021, "n03": 0.05}),
                         format="json")
    assert second.status_code == 201, second.content
    assert second.json()["replaced"] == 10
    stored = dict(BenchmarkResult.objects.filter(job=job).values_list("node__hostname",
                                                                       "seconds"))
    assert stored == {"n01": 0.02, "n02": 0.021, "n03": 0.05}
    other = client.post("/api/v1/benchmarks/", upload(job.pk, {"n01": 2.5}, "dgemm"),
                        format="json")
    assert other.json()["replaced"] == 0
    assert BenchmarkResult.objects.filter(job=job).count() == 4


def test_csv_body_and_file_upload(api, job, machine, users):
    other = Job.objects.create(name="other", external_id="77", owner=users["operator"],
                               machine=machine, node_count=2)
    text = ("job,benchmark,node,seconds,measured_at\n"
            "4242,stream,n01,0.0167,2026-01-02T03:04:05Z\n"
            "4242,stream,n02,0.0171,2026-01-02T03:04:05+00:00\n"
            f"{other.pk},stream,n03,0.0169,\n")
    response = api("operator").generic("POST", "/api/v1/benchmarks/", text,
                                       content_type="text/csv")
    assert response.status_code == 201, response.content
    assert response.json()["stored"] == 3 and len(response.json()["groups"]) == 2
    first = BenchmarkResult.objects.get(node__hostname="n01")
    assert first.measured_at.isoformat() == "2026-01-02T03:04:05+00:00"

    from django.core.files.uploadedfile import SimpleUploadedFile

    csv_file = SimpleUploadedFile("b.csv", b"job,benchmark,node,seconds\n77,stream,n05,0.02\n",
                                  content_type="text/csv")
    response = api("operator").post("/api/v1/benchmarks/", {"file": csv_file},
                                    format="multipart")
    assert response.status_code == 201, response.content
    assert response.json()["replaced"] == 1
    assert list(BenchmarkResult.objects.filter(job=other).values_list(
        "node__hostname", flat=True)) == ["n05"]


BAD_JSON = [
    ({"results": [{"node": "n01", "seconds": -1.0}]}, "results[0].seconds", "positive"),
    ({"results": [{"node": "n01", "seconds": 0.01}, {"node": "n02", "seconds": 0}]},
     "results[1].seconds", "positive"),
    ({"results": [{"node": "n01", "seconds": "fast"}]}, "results[0].seconds", "number"),
    ({"results": [{"node": "n01", "seconds": 0.01}, {"node": "zz9", "seconds": 0.01}]},
     "results[1].node", "not a node"),
    ({"results": [{"node": "n01", "seconds": 0.01}, {"node": "n01", "seconds": 0.02}]},
     "results[1].node", "already"),
    ({"results": [{"node": "n{x}", "seconds": 0.01}]}, "results[0].node", "hostname"),
    ({"results": [{"node": "n01", "seconds": 0.0167}, {"node": "n02", "seconds": 0.0168},
                  {"node": "n03", "seconds": 16.9}]}, "results[2].seconds", "mixed units"),
    ({"results": [{"node": "n01", "seconds": 0.01, "measured_at": "yesterday"}]},
     "results[0].measured_at", "ISO"),
    ({"results": [{"node": "n01", "seconds": 0.01, "measured_at": "2026-01-01T00:00:00"}]},
     "results[0].measured_at", "timezone"),
    ({"results": [{"node": "n01", "seconds": 0.01, "extra": 1}]}, "results[0].extra",
     "unknown"),
    ({"results": []}, "results", "non-empty"),
    ({"results": ["n01"]}, "results[0]", "object"),
    ({"job": "no-such-job"}, "job", "no job"),
    ({"job": 999999}, "job", "no job"),
    ({"job": True}, "job", "job id"),
    ({"benchmark": "bad name!"}, "benchmark", "letters"),
    ({"benchmark": None}, "benchmark", "required"),
]


@pytest.mark.parametrize(("change", "key", "words"), BAD_JSON)
def test_bad_json_upload_is_400_naming_row_and_field(api, job, change, key, words):
    body = {**upload(job.pk, {"n01": 0.0167}), **change}
    if body["benchmark"] is None:
        del body["benchmark"]
    response = api("operator").post("/api/v1/benchmarks/", body, format="json")
    assert response.status_code == 400, response.content
    errors = response.json()["errors"]
    assert key in errors, errors
    assert words in " ".join(errors[key]), errors
    assert not BenchmarkResult.objects.exists()


@pytest.mark.parametrize(("number", "index"), [("NaN", 1), ("Infinity", 0), ("-Infinity", 2),
                                               ("1e400", 1)])
def test_non_finite_json_times_name_the_row(api, job, number, index):
    cells = ["0.0167", "0.0168", "0.0169"]
    cells[index] = number
    results = ", ".join(f'{{"node": "n0{i + 1}", "seconds": {c}}}' for i, c in enumerate(cells))
    text = f'{{"job": {job.pk}, "benchmark": "stream", "results": [{results}]}}'
    response = api("operator").post("/api/v1/benchmarks/", text,
                                    content_type="application/json")
    assert response.status_code == 400, response.content
    assert f"results[{index}].seconds" in response.json()["errors"]
    assert "finite" in response.json()["detail"]
    assert not BenchmarkResult.objects.exists()


GOOD_CSV = "job,benchmark,node,seconds\n4242,stream,n01,0.0167\n4242,stream,n02,0.0168\n"
BAD_CSV = [
    ("job,node,seconds\n4242,n01,0.0167\n", "row 1, header", "expected"),
    ("job,benchmark,host,seconds\n4242,stream,n01,0.0167\n", "row 1, header", "expected"),
    ("", "row 1, header", "empty"),
    ("job,benchmark,node,seconds\n", "row 2", "no rows"),
    (GOOD_CSV + "4242,stream,n03,16.7ms\n", "row 4, seconds", "'ms'"),
    (GOOD_CSV + "4242,stream,n03,16.7\n", "row 4, seconds", "mixed units"),
    (GOOD_CSV + "4242,stream,n03,-0.01\n", "row 4, seconds", "positive"),
    (GOOD_CSV + "4242,stream,n03,0\n", "row 4, seconds", "positive"),
    (GOOD_CSV + "4242,stream,n03,nan\n", "row 4, seconds", "finite"),
    (GOOD_CSV + "4242,stream,n03,inf\n", "row 4, seconds", "finite"),
    (GOOD_CSV + "4242,stream,n03,1_0\n", "row 4, seconds", "not a number"),
    (GOOD_CSV + "4242,stream,n03,\n", "row 4, seconds", "required"),
    (GOOD_CSV + "4242,stream,zz99,0.0167\n", "row 4, node", "not a node of machine m4"),
    (GOOD_CSV + "4242,stream,n02,0.0167\n", "row 4, node", "already"),
    (GOOD_CSV + "9999,stream,n03,0.0167\n", "row 4, job", "no job"),
    (GOOD_CSV + "4242,stream,n03\n", "row 4", "3 cells"),
    (GOOD_CSV + "4242,str eam,n03,0.0167\n", "row 4, benchmark", "letters"),
]


@pytest.mark.parametrize(("text", "key", "words"), BAD_CSV)
def test_bad_csv_upload_is_400_naming_row_and_field(api, job, text, key, words):
    response = api("operator").generic("POST", "/api/v1/benchmarks/", text,
                                       content_type="text/csv")
    assert response.status_code == 400, response.content
    errors = response.json()["errors"]
    assert key in errors, errors
    assert words in " ".join(errors[key]), errors
    assert not BenchmarkResult.objects.exists()


def test_bad_measured_at_in_csv(api, job):
    text = "job,benchmark,node,seconds,measured_at\n4242,stream,n01,0.0167,2999-01-01T00:00Z\n"
    response = api("operator").generic("POST", "/api/v1/benchmarks/", text,
                                       content_type="text/csv")
    assert response.status_code == 400
    assert "future" in response.json()["errors"]["row 2, measured_at"][0]


def test_node_of_another_machine_is_400(api, job, machine):
    from allocation.services import machines

    machines.create_machine(name="other", sides=[2, 2], concentration=2,
                            hostname_pattern="x{n:02d}")
    response = api("operator").post("/api/v1/benchmarks/",
                                    upload(job.pk, {"n01": 0.0167, "x01": 0.0167}),
                                    format="json")
    assert response.status_code == 400
    assert "not a node of machine m4" in response.json()["errors"]["results[1].node"][0]
    assert not BenchmarkResult.objects.exists()


def test_one_bad_row_stores_nothing_even_when_replacing(api, job):
    client = api("operator")
    assert client.post("/api/v1/benchmarks/", upload(job.pk, NORMAL),
                       format="json").status_code == 201
    bad = upload(job.pk, {"n01": 0.02, "n02": -1.0})
    assert client.post("/api/v1/benchmarks/", bad, format="json").status_code == 400
    assert BenchmarkResult.objects.filter(job=job).count() == 10


def test_row_limit_and_body_limit(api, job, settings, monkeypatch):
    monkeypatch.setattr(parsing, "MAX_ROWS", 5)
    response = api("operator").post("/api/v1/benchmarks/", upload(job.pk, NORMAL),
                                    format="json")
    assert response.status_code == 400 and "at most 5" in response.json()["errors"]["results"][0]
    text = "job,benchmark,node,seconds\n" + "".join(
        f"4242,stream,n{i:02d},0.0167\n" for i in range(1, 11))
    response = api("operator").generic("POST", "/api/v1/benchmarks/", text,
                                       content_type="text/csv")
    assert response.status_code == 400 and "row 7" in response.json()["errors"]
    big = json.dumps(upload(job.pk, {"n01": 0.01})) + " " * (settings.HX_MAX_BODY_BYTES + 1)
    response = api("operator").post("/api/v1/benchmarks/", big, content_type="application/json")
    assert response.status_code == 413
    assert not BenchmarkResult.objects.exists()


def test_ambiguous_external_id_is_400(api, job, machine, users):
    Job.objects.create(name="dup", external_id="4242", owner=users["admin"], machine=machine,
                       node_count=1)
    response = api("operator").post("/api/v1/benchmarks/", upload("4242", {"n01": 0.01}),
                                    format="json")
    assert response.status_code == 400
    assert "portal id" in response.json()["errors"]["job"][0]
    by_id = api("operator").post("/api/v1/benchmarks/", upload(job.pk, {"n01": 0.01}),
                                 format="json")
    assert by_id.status_code == 201


def test_list_filters(api, job, machine, users):
    other = Job.objects.create(name="o", external_id="", owner=users["operator"],
                               machine=machine, node_count=2)
    client = api("operator")
    client.post("/api/v1/benchmarks/", upload(job.pk, NORMAL), format="json")
    client.post("/api/v1/benchmarks/", upload(other.pk, {"n20": 2.0, "n21": 2.1}, "dgemm"),
                format="json")
    viewer = api("viewer")
    assert viewer.get("/api/v1/benchmarks/").json()["count"] == 12
    assert viewer.get("/api/v1/benchmarks/?job=4242").json()["count"] == 10
    assert viewer.get(f"/api/v1/benchmarks/?job={other.pk}").json()["count"] == 2
    assert viewer.get("/api/v1/benchmarks/?benchmark=dgemm").json()["count"] == 2
    rows = viewer.get("/api/v1/benchmarks/?hostlist=n[01-02,21]").json()["results"]
    assert sorted(r["node"] for r in rows) == ["n01", "n02", "n21"]
    assert set(rows[0]) == {"id", "machine", "job", "job_external_id", "round", "node",
                            "benchmark", "seconds", "measured_at", "created_at"}
    assert viewer.get("/api/v1/benchmarks/?machine=nope").json()["count"] == 0
    assert viewer.get("/api/v1/benchmarks/?jobb=1").status_code == 400
    assert viewer.get("/api/v1/benchmarks/?hostlist=n[1-").status_code == 400


def test_deleting_a_machine_deletes_its_history(api, job):
    api("operator").post("/api/v1/benchmarks/", upload(job.pk, NORMAL), format="json")
    Machine.objects.filter(name="m4").delete()
    assert not BenchmarkResult.objects.exists()


def test_impossible_utc_offset_in_a_time_filter_is_400(api, machine):
    response = api("viewer").get("/api/v1/benchmarks/?until=0116-12-19T08:29:34-20:53")
    assert response.status_code == 400
    assert "until" in response.json()["errors"]
