"""The write path of what-if studies (see :mod:`.studies`) and the reading of
workloads (:mod:`.workloads`). Views, the API, the command and the task call these."""

from allocation.hyperx import ONLINE_POLICIES as POLICIES
from whatif.services.inline import run_inline
from whatif.services.start import start_demo, start_study
from whatif.services.studies import (
    cancel_study,
    create_study,
    delete_study,
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
    "POLICIES",
    "cancel_study",
    "create_study",
    "delete_study",
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
    "start_demo",
    "start_study",
    "synthetic",
    "upload_lines",
    "with_counts",
]
