"""Names and limits of the what-if app, read as ``constants.NAME``."""

# Celery task name (stable: queued messages carry it).
RUN_SCENARIO_TASK = "whatif.tasks.run_scenario"

#: Largest upload (bytes): a 1,000,000-line SWF log is about 80 MB.
MAX_UPLOAD_BYTES = 128 * 1024 * 1024
#: Most jobs a study stores and replays (after leaving out jobs larger than the machine).
MAX_JOBS = 1_000_000
#: Most seeds per scenario, and most scenario-seed runs per study.
MAX_SEEDS = 10
MAX_RUNS = 400
#: Spare-model parameters when the machine has no estimate yet (labelled in results).
DEFAULT_P_ABN = 0.005
DEFAULT_ALPHA_ABN = 2.0
DEFAULT_T_BENCH = 30.0
#: The one-click synthetic month: days and load factor of the Lublin model.
SYNTHETIC_DAYS = 30
SYNTHETIC_LOAD = 1.5
#: Most jobs a synthetic workload draws (days x load is otherwise unbounded).
MAX_SYNTHETIC_JOBS = 200_000
#: The one-click study's scenarios.
DEMO_SPARES = ("none", "2", "recommended")
DEMO_SEEDS = 3
