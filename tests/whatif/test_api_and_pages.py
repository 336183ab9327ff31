"""/api/v1/whatif/ (create with an upload, progress, results, CSV) and /whatif/."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.whatif.test_command_and_services import SWF, run_pending
from whatif.models import WhatIfStudy
from whatif.replay import SUMMARY_KEYS


def upload(text: str = SWF, name: str = "log.swf") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, text.encode(), content_type="text/plain")


def test_create_with_upload_then_progress_and_results(api, machine):
    client = api("operator")
    response = client.post("/api/v1/whatif/", {
        "machine": "m4", "format": "swf", "workload": upload(), "policies": ["row", "diagonal"],
        "spares": ["none", "1"], "seeds": 2}, format="multipart")
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["run_count"] == 8 and body["workload_info"]["left_out"] == 1
    study = WhatIfStudy.objects.get(pk=body["id"])
    progress = client.get(f"/api/v1/whatif/{study.pk}/progress/").json()
    assert progress == {"status": "pending", "runs": {"pending": 8}, "total": 8,
                        "fraction": 0.0}
    run_pending(study)
    results = api("viewer").get(f"/api/v1/whatif/{study.pk}/results/").json()
    assert results["progress"]["status"] == "succeeded"
    entry = results["scenarios"][0]
    assert set(entry) == {"policy", "spares", "summary", "jobs"}
    assert tuple(entry["summary"]) == SUMMARY_KEYS
    slim = client.get(f"/api/v1/whatif/{study.pk}/results/?jobs=false").json()
    assert "jobs" not in slim["scenarios"][0]
    csv = client.get(f"/api/v1/whatif/{study.pk}/csv/")
    assert csv.status_code == 200 and csv["Content-Type"] == "text/csv"
    assert csv.content.decode().count("\n") == 5


def test_bad_upload_names_line_and_field(api, machine):
    bad = SWF + "\n201 5000 0 sixty 4 -1 -1 4 600 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
    response = api("operator").post("/api/v1/whatif/", {
        "machine": "m4", "format": "swf", "workload": upload(bad), "policies": ["row"]},
        format="multipart")
    assert response.status_code == 400
    assert "line 123, field 4 (run_time): 'sixty' is not a number" in response.content.decode()
    missing = api("operator").post("/api/v1/whatif/", {
        "machine": "m4", "format": "sacct", "policies": ["row"]}, format="json")
    assert missing.status_code == 400 and "upload the sacct file" in missing.content.decode()


def test_demo_is_one_click_and_viewers_cannot(api, machine, small_demo):
    assert api("viewer").post("/api/v1/whatif/demo/", {"machine": "m4"},
                              format="json").status_code == 403
    response = api("operator").post("/api/v1/whatif/demo/", {"machine": "m4"}, format="json")
    assert response.status_code == 202
    assert response.json()["run_count"] == 8 * 3 * 1  # policies x spare rules x seeds
    history = api("operator").post("/api/v1/whatif/demo/", {"machine": "m4",
                                                            "format": "history"}, format="json")
    assert history.status_code == 400  # no synced Slurm job yet


def test_delete_waits_for_cancel(api, machine):
    client = api("operator")
    study = client.post("/api/v1/whatif/", {"machine": "m4", "format": "synthetic", "days": 1,
                                            "policies": ["row"]}, format="json").json()
    assert client.delete(f"/api/v1/whatif/{study['id']}/").status_code == 409
    assert client.post(f"/api/v1/whatif/{study['id']}/cancel/").json()["status"] == "cancelled"
    assert client.delete(f"/api/v1/whatif/{study['id']}/").status_code == 204


@pytest.fixture
def small_demo(monkeypatch):
    from whatif import constants

    monkeypatch.setattr(constants, "DEMO_SEEDS", 1)
    monkeypatch.setattr(constants, "SYNTHETIC_DAYS", 3)


@pytest.mark.django_db
def test_pages(client_for, machine, small_demo):
    operator = client_for("operator")
    page = operator.get("/whatif/")
    assert page.status_code == 200 and b"What-if on a synthetic month" in page.content
    started = operator.post("/whatif/demo/", {"machine": "m4", "format": "synthetic"})
    study = WhatIfStudy.objects.get()
    assert started.status_code == 302 and started["Location"] == f"/whatif/{study.pk}/"
    running = operator.get(f"/whatif/{study.pk}/")
    assert b'data-refresh="3"' in running.content
    run_pending(study)
    done = client_for("viewer").get(f"/whatif/{study.pk}/")
    text = done.content.decode()
    assert 'data-refresh' not in text
    assert text.count('data-best="1"') >= 9  # one best per row at least
    for testid in ("whatif-utilisation", "whatif-queue", "whatif-wait-cdf",
                   "whatif-node-hours", "whatif-whole-free-switches"):
        assert f'data-testid="{testid}"' in text
    assert "analytic" in text
    assert client_for("viewer").get(f"/whatif/{study.pk}/results.csv").status_code == 200
    refused = operator.post("/whatif/new/", {"machine": "m4", "format": "swf",
                                             "policies": ["row"], "spares": "none",
                                             "seeds": 1})
    assert refused.status_code == 400 and b"upload the swf file" in refused.content
