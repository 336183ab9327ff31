"""The write path of what-if studies (see :mod:`.studies`) and the reading of
workloads (:mod:`.workloads`). Views, the API, the command and the task call these."""

from whatif.services.inline import run_inline
from whatif.services.studies import (
    cancel_study,
    create_study,
    execute_run,
    export_csv,
    model_parameters,
    progress,
    results,
    scenarios_of,
    with_counts,
)
from whatif.services.workloads import (
    history_workload,
    machine_topology,
    parse_upload,
    prepare,
    synthetic,
    upload_lines,
)

__all__ = [
    "cancel_study",
    "create_study",
    "execute_run",
    "export_csv",
    "history_workload",
    "machine_topology",
    "model_parameters",
    "parse_upload",
    "prepare",
    "progress",
    "results",
    "run_inline",
    "scenarios_of",
    "synthetic",
    "upload_lines",
    "with_counts",
]
