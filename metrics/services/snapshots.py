"""Beat's refresh of the health snapshots: the drain rule over every machine, stored."""

from __future__ import annotations

import time

from django.db import transaction
from django.utils import timezone

from allocation.services import queries
from health import services as health
from health.constants import DEFAULT_WINDOW_DAYS
from metrics.models import HealthSnapshot


def refresh_health_snapshots(window_days: int = DEFAULT_WINDOW_DAYS) -> int:
    """Classify every machine's window (its latest benchmark, as the health page opens)
    and store drain candidates and the watch list; returns the number of machines.

    The classification is the health app's own (:func:`health.services.machines_health`),
    so the metrics and the health page never disagree on a candidate."""
    started = time.monotonic()
    machines = list(queries.machines())
    states = health.machines_health(machines, window_days)
    elapsed = time.monotonic() - started
    now = timezone.now()
    with transaction.atomic():
        for machine in machines:
            state = states[machine.pk]
            HealthSnapshot.objects.update_or_create(machine=machine, defaults={
                "computed_at": now, "benchmark": state.benchmark,
                "window_days": state.window_days, "node_runs": state.runs,
                "candidates": sorted(s.node for s in state.candidates),
                "watch": len(state.watch), "duration_seconds": elapsed})
    return len(machines)
