"""The write path for simulations: the only bridge between rows and the pure engine.

* A run is a :class:`~simulation.models.SimulationRun` row holding the full,
  validated engine configuration (``SimConfig.to_dict()``), the engine version
  and ``config_hash`` (sha256 of the canonical JSON of config, explicit
  partitions and engine version). It is enqueued once its row is committed and
  executed by :func:`execute_run` through :func:`hxportal.runs.execute`
  (claim, simulate outside any transaction, store once).
* Reuse: a run whose ``config_hash`` matches a succeeded run copies that
  run's result instead of simulating (``result["reused"]``; ``result["reused_from"]``
  names it, unless under ``HX_PRIVATE_DATA`` it is another user's run).
  Single runs are reused at creation; sweep runs when the worker claims them.
  Work that needs a result inside its own task (a recommendation's predictions)
  asks :func:`stored_result`: the stored result of that hash, else it simulates
  once and stores a run of its ``origin`` (``SimulationRun.origin``), so
  predictions, sweeps and calibrations share one store.
* A sweep is the product of parameter lists over a base configuration, one run
  (and one Celery task) per point; its status and progress are derived from
  its runs.

The service API of the app, by topic: :mod:`.configs`, :mod:`.runs`,
:mod:`.sweeps`; the web side's limits are in ``simulation.constants``."""

from allocation.hyperx import PLACEMENT_VERSION
from simulation.engine import ENGINE_VERSION
from simulation.engine.config import POLICY_NAMES, study_message_packets
from simulation.services.configs import (
    CHOICES,
    CONFIG_FIELDS,
    DEFAULTS,
    canonical_config,
    check_config,
    config_hash,
    describe,
    is_kernel,
    machine_partitions,
    parse_config,
    placement_version_of,
    study_packets_per_rank,
    usable_ranks,
    validate_config,
)
from simulation.services.runs import (
    cancel_run,
    delete_run,
    execute_run,
    has_partitions,
    reusable_source,
    signed_in_user,
    simulate_inline,
    simulate_work,
    start_run,
    stored_result,
    summarise,
)
from simulation.services.sweeps import (
    RESULT_COLUMNS,
    SWEEP_ORDER,
    cancel_sweep,
    create_point_sweep,
    create_sweep,
    delete_sweep,
    expand_sweep,
    result_row,
    start_reproduction,
    start_study,
    study_size,
    sweep_counts,
    sweep_progress,
    sweep_rows,
    sweep_status_text,
    with_counts,
)

__all__ = [
    "CHOICES",
    "CONFIG_FIELDS",
    "DEFAULTS",
    "ENGINE_VERSION",
    "PLACEMENT_VERSION",
    "POLICY_NAMES",
    "RESULT_COLUMNS",
    "SWEEP_ORDER",
    "cancel_run",
    "cancel_sweep",
    "canonical_config",
    "check_config",
    "config_hash",
    "create_point_sweep",
    "create_sweep",
    "delete_run",
    "delete_sweep",
    "describe",
    "execute_run",
    "expand_sweep",
    "has_partitions",
    "is_kernel",
    "machine_partitions",
    "parse_config",
    "placement_version_of",
    "result_row",
    "reusable_source",
    "signed_in_user",
    "simulate_inline",
    "simulate_work",
    "start_reproduction",
    "start_run",
    "start_study",
    "stored_result",
    "study_message_packets",
    "study_packets_per_rank",
    "study_size",
    "summarise",
    "sweep_counts",
    "sweep_progress",
    "sweep_rows",
    "sweep_status_text",
    "usable_ranks",
    "validate_config",
    "with_counts",
]
