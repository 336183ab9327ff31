"""Pure core of the what-if replay: a site's job log replayed on the HyperX
model under each allocation policy and spare rule.

No Django, no I/O: workloads come in as lines or records, results go out as
plain dicts. See docs/domain.md section 7 for the model.
"""

from .engine import ReplayResult, replay
from .metrics import SUMMARY_KEYS, interval, summarise
from .model import IDEAL, ModelParameters, SpareRule
from .patterns import DEFAULT_COMM_SHARE, DEFAULT_PATTERN, assign_patterns
from .sacct import parse_sacct
from .scenarios import Scenario, best_marks, gather, run_one, run_study
from .swf import parse_swf
from .synthetic import LUBLIN_BATCH, synthetic_workload
from .workload import (
    MAX_LINES,
    Job,
    Workload,
    WorkloadError,
    fit_to_machine,
    from_columns,
    to_columns,
)

__all__ = [
    "DEFAULT_COMM_SHARE",
    "DEFAULT_PATTERN",
    "IDEAL",
    "LUBLIN_BATCH",
    "MAX_LINES",
    "SUMMARY_KEYS",
    "Job",
    "ModelParameters",
    "ReplayResult",
    "Scenario",
    "SpareRule",
    "Workload",
    "WorkloadError",
    "assign_patterns",
    "best_marks",
    "fit_to_machine",
    "from_columns",
    "gather",
    "interval",
    "parse_sacct",
    "parse_swf",
    "replay",
    "run_one",
    "run_study",
    "summarise",
    "synthetic_workload",
    "to_columns",
]
