"""An estimation run stores alpha_abn's interval with the estimate, and the API shows
it; results stored before the interval existed still store (without one)."""

from __future__ import annotations

import pytest
from django.utils import timezone

from health import services as health
from health import tasks
from health.models import Estimate, EstimationRun
from hxportal.models import RunStatus
from tests.metrics.conftest import upload_rounds

pytestmark = pytest.mark.django_db


def test_the_estimate_keeps_the_interval_of_alpha_abn(machine, users, api):
    upload_rounds(machine, users["operator"], rounds=4)  # n05 and n09 30 % slower
    run = health.start_estimation(machine)
    tasks.run_estimation.apply(args=[run.pk])
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    est = Estimate.objects.get(run=run)
    assert est.abnormal_runs == 8
    assert est.alpha_abn_low < est.alpha_abn < est.alpha_abn_high
    assert 1.25 < est.alpha_abn_low and est.alpha_abn_high < 1.35  # the true slowdown is 1.3
    body = api("viewer").get(f"/api/v1/estimates/{est.pk}/").json()
    assert (body["alpha_abn_low"], body["alpha_abn_high"]) == (est.alpha_abn_low,
                                                               est.alpha_abn_high)


def test_a_result_from_before_the_interval_still_stores(machine):
    now = timezone.now()
    run = EstimationRun.objects.create(machine=machine, result={
        "window_start": now.isoformat(), "window_end": now.isoformat(), "estimates": [{
            "benchmark": "stream", "runs": 10, "abnormal_runs": 1, "jobs": 1, "nodes": 10,
            "t_bench": 1.0, "alpha_abn": 2.0, "p_abn": 0.1, "p_abn_interval": [0.01, 0.4],
            "confidence": 0.95, "rule": {}}]})
    health.store_estimates(run)
    est = Estimate.objects.get(run=run)
    assert (est.alpha_abn, est.alpha_abn_low, est.alpha_abn_high) == (2.0, None, None)
