"""The first recommendation after a worker starts is answered by simulation.

The worker warms the engine when it starts (``simulation.worker``), so the
first recommendation's predictions run on compiled code: two pool processes
simulate the eight policies (three seeds each, the study's volume) on the
half-full reference machine, and the answer is ready by simulation, not by
the analytic fallback that replaces predictions still running at the
``DEADLINE_SECONDS`` deadline (polled through the API, which applies it).
"""

from __future__ import annotations

import time

import pytest

from recommendations import constants as recommendation_constants
from tests.recommendations.test_recommendations import SPARES, ref  # noqa: F401 (fixture)
from tests.workers import celery_worker, purge_broker, wait_for


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_first_recommendation_on_a_fresh_worker_is_simulated(tmp_path, api, ref):  # noqa: F811
    purge_broker()
    log_path = tmp_path / "worker.log"
    with celery_worker(log_path, concurrency=2):
        assert "simulation engine warmed up" in log_path.read_text()
        started = time.monotonic()
        response = api("operator").post("/api/v1/recommendations/", {
            "machine": "ref", "node_count": 64, "pattern": "all-to-all", "t_cmpt": 100,
            "t_comm": 50, **SPARES}, format="json")
        assert response.status_code == 202, response.content
        rec_id = response.json()["id"]

        def answered() -> dict | None:
            body = api("viewer").get(f"/api/v1/recommendations/{rec_id}/").json()
            return body if body["status"] != "computing" else None

        try:
            body = wait_for(answered, timeout=recommendation_constants.DEADLINE_SECONDS + 30)
        except AssertionError:
            pytest.fail("no answer; worker log:\n" + log_path.read_text()[-4000:])
        elapsed = time.monotonic() - started
    print(f"\nfirst recommendation on a fresh 2-process worker: {elapsed:.1f} s")
    assert body["method"] == "simulation", (body["note"], log_path.read_text()[-3000:])
    assert body["progress"] == {"simulations": 8, "done": 8}
    assert body["ranking"][0]["policy"] == body["recommended"]["policy"]
