"""The node-health service API: what views, the API, commands, tasks and other apps call.

Callers import the package (``from health import services as health``) and use the
names in ``__all__``; the modules behind it are split by topic and may move:

* :mod:`.ingest` - benchmark uploads (JSON or CSV): parse, validate, store (its
  ``ingest`` function is not re-exported: the name is the module's);
* :mod:`.estimation` - estimation runs (``p_abn``, ``alpha_abn``, ``t_bench``);
* :mod:`.spares` - the spare recommendation and selecting a job's fastest nodes;
* :mod:`.suspects` - per-node health, node histories and drains.

The maths lives in the pure core :mod:`health.maths`; node states and hostlists
come from :mod:`allocation.services.machines`.
"""

from __future__ import annotations

from health.maths import median
from health.services.estimation import (
    LATEST,
    estimate_history,
    estimate_of,
    estimate_work,
    latest_estimate,
    start_all_estimations,
    start_estimation,
    store_estimates,
)
from health.services.ingest import IngestResult, ingest_csv, ingest_payload, resolve_job
from health.services.parsing import (
    MAX_ROWS,
    ErrorCollector,
    ParsedRow,
    check_benchmark,
    check_node,
    check_seconds,
    check_units,
    parse_csv,
    parse_payload,
)
from health.services.spares import (
    MAX_CURVE_POINTS,
    MAX_N_NODE,
    job_benchmarks,
    job_nodes,
    job_times,
    recommend,
    record_selection,
    select_fastest,
)
from health.services.suspects import (
    DRAIN_MIN_RUNS,
    DRAIN_PRIOR,
    DRAIN_PROBABILITY,
    WATCH_SHOWN,
    MachineHealth,
    benchmarks_of,
    drain_reason,
    drain_suspect,
    drain_suspect_preview,
    machine_health,
    machines_health,
    needs_text,
    node_history,
    suspicion_level,
)
from health.services.window import run_key

__all__ = [
    "DRAIN_MIN_RUNS",
    "DRAIN_PRIOR",
    "DRAIN_PROBABILITY",
    "LATEST",
    "MAX_CURVE_POINTS",
    "MAX_N_NODE",
    "MAX_ROWS",
    "WATCH_SHOWN",
    "ErrorCollector",
    "IngestResult",
    "MachineHealth",
    "ParsedRow",
    "benchmarks_of",
    "check_benchmark",
    "check_node",
    "check_seconds",
    "check_units",
    "drain_reason",
    "drain_suspect",
    "drain_suspect_preview",
    "estimate_history",
    "estimate_of",
    "estimate_work",
    "ingest_csv",
    "ingest_payload",
    "job_benchmarks",
    "job_nodes",
    "job_times",
    "latest_estimate",
    "machine_health",
    "machines_health",
    "median",
    "needs_text",
    "node_history",
    "parse_csv",
    "parse_payload",
    "recommend",
    "record_selection",
    "resolve_job",
    "run_key",
    "select_fastest",
    "start_all_estimations",
    "start_estimation",
    "store_estimates",
    "suspicion_level",
]
