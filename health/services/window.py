"""The window of benchmark results that estimation and node suspicion both read."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError

from health.constants import MAX_WINDOW_DAYS
from health.models import BenchmarkResult


def check_window(window_days: Any) -> int:
    """The window length in days, refused with a ``window_days`` error outside 1..max."""
    if isinstance(window_days, bool) or not isinstance(window_days, int) or not (
            1 <= window_days <= MAX_WINDOW_DAYS):
        raise ValidationError({"window_days": [f"must be an integer in 1..{MAX_WINDOW_DAYS}"]})
    return window_days


def window_runs(machine_id: int, benchmark: str, start: datetime,
                end: datetime) -> list[tuple[str, str, str, float]]:
    """(job, node, benchmark, seconds) of the machine's results in the window, oldest
    first: the order the pure core reads a history in. All benchmarks when ``benchmark``
    is empty."""
    query = BenchmarkResult.objects.filter(machine_id=machine_id, measured_at__gte=start,
                                           measured_at__lte=end)
    if benchmark:
        query = query.filter(benchmark=benchmark)
    return [(str(job), host, bench, seconds) for job, host, bench, seconds in
            query.order_by("measured_at", "id").values_list(
                "job_id", "node__hostname", "benchmark", "seconds")]
