"""Beat's entry for the health snapshot: scheduled, on the maintenance queue, and the
task stores the snapshot."""

from __future__ import annotations

import pytest
from django.conf import settings
from django_celery_beat.models import PeriodicTask

from metrics import tasks
from metrics.constants import REFRESH_SNAPSHOTS_TASK
from metrics.models import HealthSnapshot


@pytest.mark.django_db
def test_beat_refreshes_the_snapshot_every_two_minutes_on_the_maintenance_queue(machine):
    entry = PeriodicTask.objects.get(name="refresh health snapshots for metrics")
    assert entry.task == REFRESH_SNAPSHOTS_TASK and entry.enabled
    assert (entry.interval.every, entry.interval.period) == (120, "seconds")
    route = settings.CELERY_TASK_ROUTES[REFRESH_SNAPSHOTS_TASK]
    assert route == {"queue": settings.HX_MAINTENANCE_QUEUE}
    assert tasks.refresh_health_snapshots.apply().get() == 1
    assert HealthSnapshot.objects.get(machine=machine).candidates == []
