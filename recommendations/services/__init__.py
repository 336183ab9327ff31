"""The write path for per-job recommendations: rank every policy on the live
occupancy, combine with the spare model, accept atomically.

How a recommendation is made
----------------------------
1. Every online policy proposes a partition for the job on the current
   occupancy (a dry run of ``allocation.hyperx.allocate``), with its properties
   and the number of whole free switches it would break. The occupancy is read
   once per request and kept with the recommendation (held and down endpoints,
   each candidate's endpoints): every later step reads that snapshot.
2. An *analytic* ranking is stored at once. Its communication factor per policy
   is ``max(1, 1 / PB) * (1 + LOCALITY_PENALTY * u)`` when the partition lacks
   switch locality (``u``: fraction of the machine other jobs hold; their
   traffic shares its switches), else ``max(1, 1 / PB)``; PB is the exact
   partition bandwidth when computed, else the bound. An endpoint cannot
   inject more than 1 phit/cycle, so PB above 1 does not speed uniform traffic.
3. One packet-level prediction per policy and seed runs as a Celery task
   (:class:`PolicyPrediction` rows, so the seeds spread over the workers as the
   policies do), each through ``simulation.services``
   (a configuration simulated before, by any prediction, sweep or calibration,
   is read from its stored run), in the engine's faithful study mode with
   the study's routing (Omni-WAR, shared VCs): the job's pattern on its
   candidate, the other jobs' nodes sending random-permutation background
   traffic at full load (the engine's ``background`` scenario), over
   ``HX_PREDICTION_SEEDS`` seeds at the study's kernel volume (shorter runs measure
   transients: at half the volume the ranking on the reference case already
   differs). When all finish and the seeds split on the fastest policy,
   the fastest and its rivals run more seeds, a round at a time, while the
   deadline leaves time (:mod:`.seeds`, ``HX_PREDICTION_MAX_SEEDS``). Then the
   ranking is redone from each policy's mean completion time over its seeds
   (a policy ranks by simulation only with every first seed). If they do not
   all finish within ``DEADLINE_SECONDS``, the ones that did rank, the
   analytic score (relative to the same reference policy) stands in for the
   others, the note names both, and predictions not started are cancelled.
4. What one job's simulation cannot see is added as a rule from the study
   (docs/domain.md section 3): a candidate without switch locality, when some
   other candidate has it, is *refused* if other jobs hold at least
   ``LOCALITY_LOAD`` of the machine (interference and head-of-line blocking)
   or it breaks whole free switches (fragmentation that later jobs pay for),
   unless its simulated time beats the best locality-aware candidate by
   ``CLEAR_WIN`` for each of the two that applies. The reasons say which rule
   refused it.
5. Each policy's communication time is the job's ``t_comm`` (as measured under
   the site's default policy) scaled by ``factor(policy) / factor(default)``;
   the spare model (``health.services.recommend``, latest estimate) then
   gives N_spare and E[C] per policy (the estimate is read once per ranking).
   The recommendation is the lowest E[C] among candidates not refused; each
   candidate's spares are chosen by its policy around its own primaries on the
   snapshot, so the recommended nodes are the partition that was simulated,
   and :func:`accept` allocates exactly those (a primary taken meanwhile: it
   proposes anew and the note says so).

Answers are cached by machine occupancy and job shape for ``CACHE_SECONDS``:
the computation is shared, never the row. The asker's own repeat (same name
and external id) gets the same row; anyone else asking gets a row of their own
(``shared_from``) with the ranking, or the simulations still running, of the
first; under ``HX_PRIVATE_DATA`` only among rows the asker may read.

The service API of the app, by topic: :mod:`.lifecycle` (ask, cache, refresh,
accept), :mod:`.ranking` (factors, spare model, refusal rules),
:mod:`.predictions` (the simulations) and :mod:`.seeds` (what their seeds
say). Limits and tuning are in ``recommendations.constants``.
"""

from recommendations.services.calibration import (
    calibrated_answer,
    calibration_progress,
    cancel_calibration,
    current_calibration,
    prepare_calibration,
    refresh_calibration,
    refresh_running_calibrations,
    start_calibration,
    start_missing_calibrations,
)
from recommendations.services.lifecycle import (
    accept,
    default_policy,
    expire_overdue,
    occupancy_fingerprint,
    refresh,
    request_recommendation,
)
from recommendations.services.predictions import (
    finish_if_complete,
    predict_work,
    prediction_config,
    prediction_progress,
    run_prediction,
)
from recommendations.services.ranking import analytic_factors, sbatch_lines, store_ranking

__all__ = [
    "accept",
    "analytic_factors",
    "calibrated_answer",
    "calibration_progress",
    "cancel_calibration",
    "current_calibration",
    "default_policy",
    "expire_overdue",
    "finish_if_complete",
    "occupancy_fingerprint",
    "predict_work",
    "prediction_config",
    "prediction_progress",
    "prepare_calibration",
    "refresh",
    "refresh_calibration",
    "refresh_running_calibrations",
    "request_recommendation",
    "run_prediction",
    "sbatch_lines",
    "start_calibration",
    "start_missing_calibrations",
    "store_ranking",
]
