"""Names, limits and tuning of recommendations, read as ``constants.NAME`` so a
test can change one in one place."""

from django.conf import settings

# The policy calibration pages compare the others with (re-exported for the pages).
from allocation.hyperx import BASELINE_POLICY  # noqa: F401
from allocation.models import CommPattern

# Celery task names (stable: queued messages and beat rows carry them).
PREDICT_POLICY_TASK = "allocation.tasks.predict_policy"
EXPIRE_RECOMMENDATIONS_TASK = "allocation.tasks.expire_recommendations"

#: Seconds the simulations get; then the ones finished rank, the analytic score for the rest.
DEADLINE_SECONDS = 30
#: Seconds an identical question on an unchanged machine gets the stored answer.
CACHE_SECONDS = 600
#: Analytic slowdown per unit of held machine for a candidate without switch locality.
LOCALITY_PENALTY = 0.5


def prediction_seeds() -> tuple[int, ...]:
    """Engine seeds of each policy's live prediction (the mean completion time ranks):
    ``HX_PREDICTION_SEEDS`` of them, 0, 1, ... (the calibration's seeds are its own)."""
    return tuple(range(settings.HX_PREDICTION_SEEDS))


#: Predictions run the study's kernel volume divided by this. Measured on the
#: reference case (64-node all-to-all, half-full 8x8 machine): at 1/4 and 1/2
#: of the volume the order of the locality-aware policies still differs from
#: the one at the full volume (transients), so predictions use the full volume.
PREDICTION_VOLUME_DIVISOR = 1
#: Fraction of the machine held by other jobs above which losing switch
#: locality is refused (the study's interference scenario starts here).
LOCALITY_LOAD = 0.25
#: A candidate without switch locality must be this much faster (simulated)
#: than the best locality-aware one to be recommended anyway.
CLEAR_WIN = 0.10
#: Characters a recommendation's note keeps: a calibrated answer's note with all its
#: caveats (about 600 characters) must fit whole.
NOTE_LENGTH = 1000
#: Keys of ``Recommendation.inputs`` that hold the occupancy snapshot and the
#: candidates' endpoints the ranking and accept read (not shown in the answer).
SNAPSHOT_INPUTS = ("candidates", "held_endpoints", "down_endpoints", "estimate_id")
#: The simulator's pattern for a job's: its own name (one vocabulary), and uniform
#: traffic for a job that does not say.
KERNELS = {**{p: str(p) for p in CommPattern if p != CommPattern.UNKNOWN},
           CommPattern.UNKNOWN: str(CommPattern.UNIFORM)}
#: Runs a calibration may have (the default grid of a 16x16x16, c = 16 machine has 1,440).
MAX_CALIBRATION_RUNS = 20_000
#: Values one axis of a calibration grid may list.
MAX_CALIBRATION_AXIS = 64
#: Share of the deadline the expected live simulation time may use (the rest is
#: margin for queueing and the expected time's error).
LIVE_DEADLINE_SHARE = 0.6
#: Celery task names of calibrations.
CALIBRATE_MACHINES_TASK = "hx.recommendations.calibrate_machines"
REFRESH_CALIBRATIONS_TASK = "hx.recommendations.refresh_calibrations"
PREPARE_CALIBRATION_TASK = "hx.recommendations.prepare_calibration"
#: A calibration still without runs this long after it started lost its ``prepare``
#: message (a worker killed): beat queues it again.
PREPARE_GRACE_SECONDS = 600
#: Before a calibration gives measured run times: cycles of a study-volume kernel run
#: (about 1.5 x the 16,384 phits a rank sends) on a job of this many ranks (a kernel
#: that sends more per rank at the job's size runs longer in proportion) ...
EXPECTED_RUN_CYCLES = 24_576
EXPECTED_RUN_RANKS = 64
#: ... and endpoint-cycles the engine simulates per second on one process (the
#: reference case, 64 + 256 busy endpoints, runs in about 0.9 s).
ENDPOINT_CYCLES_PER_SECOND = 8.0e6
