"""Names and limits of node health used in more than one module."""

# Celery task names (stable: queued messages and beat rows carry them).
RUN_ESTIMATION_TASK = "allocation.tasks.run_estimation"
ESTIMATE_ALL_MACHINES_TASK = "allocation.tasks.estimate_all_machines"

# Benchmark names: letters, digits, '_', '.', ':', '+' and '-' (at most 64).
BENCHMARK_NAME_RE = r"^[A-Za-z0-9][A-Za-z0-9_.:+-]{0,63}\Z"
# Estimation window (days): the default and the most a request may ask for.
DEFAULT_WINDOW_DAYS = 30
MAX_WINDOW_DAYS = 3650
