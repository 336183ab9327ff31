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


def run_key(job_id: int | None, round_id: int | None) -> str:
    """The group a node-run is judged in (its median is the reference): the job's id, or
    ``round N`` for a health round (docs/domain.md section 5.6).

    >>> run_key(42, None), run_key(None, 3)
    ('42', 'round 3')
    """
    return str(job_id) if job_id is not None else f"round {round_id}"


def window_runs(machine_id: int, benchmark: str, start: datetime,
                end: datetime) -> list[tuple[str, str, str, float]]:
    """(job or round, node, benchmark, seconds) of the machine's results in the window,
    oldest first: the order the pure core reads a history in. All benchmarks when
    ``benchmark`` is empty."""
    query = BenchmarkResult.objects.filter(machine_id=machine_id, measured_at__gte=start,
                                           measured_at__lte=end)
    if benchmark:
        query = query.filter(benchmark=benchmark)
    return [(run_key(job, health_round), host, bench, seconds)
            for job, health_round, host, bench, seconds in
            query.order_by("measured_at", "id").values_list(
                "job_id", "health_round_id", "node__hostname", "benchmark", "seconds")]
