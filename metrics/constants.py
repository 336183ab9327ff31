"""Names and limits of the metrics app used in more than one module."""

# Celery task name (stable: beat's row and queued messages carry it).
REFRESH_SNAPSHOTS_TASK = "hx.metrics.refresh_health_snapshots"
# How often beat recomputes the fleet's drain candidates (the migration's schedule;
# editable in the admin). Benchmark results arrive a few times a day per machine.
SNAPSHOT_INTERVAL_SECONDS = 120
# Recommendation latency histogram buckets (seconds): analytic answers take well
# under a second, simulated ones up to their 30 s deadline.
LATENCY_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 45.0, 60.0, 120.0, 300.0)
# A scrape waits at most this long for the broker (seconds).
BROKER_TIMEOUT = 2.0
