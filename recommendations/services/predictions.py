"""One packet-level prediction per policy and engine seed (a tracked run each), and
the ranking by simulation once every prediction has ended."""

from __future__ import annotations

import math
from collections.abc import Collection

import numpy as np
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from allocation.hyperx import BASELINE_POLICY
from allocation.models import Machine
from hxportal.models import TERMINAL_RUN_STATUSES, RunStatus
from hxportal.runs import RunReporter, enqueue, execute
from hxportal.text import join_words
from recommendations import constants
from recommendations.models import (
    PolicyPrediction,
    Recommendation,
    RecommendationMethod,
    RecommendationStatus,
)
from recommendations.services.ranking import (
    NO_SEEDS,
    SeedVerdict,
    analytic_factors,
    refused_policies,
    store_ranking,
)
from recommendations.services.seeds import (
    mean_cycles,
    paired_difference,
    seed_caveat,
    seed_cycles,
    seed_rivals,
    seed_scales,
    settling_round,
)
from simulation import services as simulation
from simulation.models import RunOrigin


def prediction_config(machine: Machine, rec: Recommendation, policy: str, seed: int
                      ) -> dict:
    """Engine config for one policy's simulation of the job's pattern at one seed."""
    return prediction_settings(list(machine.sides), machine.concentration, rec.pattern,
                               rec.node_count, policy,
                               background=len(rec.inputs.get("held_endpoints", ())) >= 2,
                               seed=seed)


def prediction_settings(sides: list[int], concentration: int, pattern: str, node_count: int,
                        policy: str, *, background: bool, seed: int) -> dict:
    """Engine config of a prediction: ``pattern``'s kernel on ``node_count`` nodes at the
    study's volume, Omni-WAR with shared VCs, the held endpoints as background traffic
    when there are some. A calibration point is the same configuration on a synthetic
    occupancy, so calibrated and live answers measure the same thing."""
    kernel = constants.KERNELS[pattern]
    ranks = max(simulation.usable_ranks(kernel, node_count), 2)
    volume = simulation.study_message_packets(kernel, ranks) \
        // constants.PREDICTION_VOLUME_DIVISOR
    config = {"sides": list(sides), "concentration": concentration,
              "routing": "omniwar", "vcs": max(4, 2 * len(sides)),
              "vc_sets": "shared", "policy": policy,
              "scenario": "background" if background else "single",
              "pattern": kernel, "ranks": ranks, "seed": seed,
              "max_cycles": 2_000_000, "message_packets": max(1, volume)}
    if not simulation.is_kernel(kernel):  # open loop: a bounded amount at full load
        config.update(rate=1.0, packets_per_task=64)
    return config


def predict_work(prediction: PolicyPrediction, reporter: RunReporter) -> dict:
    """Simulate the job's pattern on this policy's candidate at the prediction's seed
    (the task's body) through ``simulation.services``: a configuration (and
    partitions) simulated before, by a prediction, a sweep or a calibration, is read
    from the stored result instead of simulated again."""
    rec = prediction.recommendation
    candidate = next(c for c in rec.inputs["candidates"] if c["policy"] == prediction.policy)
    config = simulation.parse_config(prediction.parameters)
    partitions = [np.asarray(candidate["endpoints"], dtype=np.int64)[: config.ranks]]
    if config.scenario == "background":
        partitions.append(np.asarray(rec.inputs["held_endpoints"], dtype=np.int64))
    reporter.log(f"simulating {config.pattern} on {prediction.policy} ({config.ranks} ranks, "
                 f"{len(rec.inputs.get('held_endpoints', ()))} busy endpoints as background, "
                 f"seed {config.seed})")
    result, was_stored = simulation.stored_result(
        config, partitions, origin=RunOrigin.PREDICTION, user=prediction.user,
        machine=rec.machine, progress=reporter.progress)
    if was_stored:
        reporter.log("read from a stored result")
    completed = bool(result["completed"])
    return {"completion_cycles": result["apps"][0]["completion_cycles"] if completed else None,
            "cycles": result["cycles"], "completed": completed,
            "cpu_seconds": result.get("cpu_seconds")}


def policy_cycles(predictions: list[PolicyPrediction], extra_seeds: Collection[int] = ()
                  ) -> dict[str, int]:
    """Each policy's mean completion cycles over its seeds (:func:`.seeds.seed_cycles`)."""
    return mean_cycles(seed_cycles(predictions, extra_seeds))


def run_prediction(prediction_id: int) -> str | None:
    """The task's one call: run the prediction once, then rank if all are in."""
    status = execute(PolicyPrediction, prediction_id, predict_work)
    prediction = PolicyPrediction.objects.filter(pk=prediction_id).first()
    if prediction is not None:
        finish_if_complete(prediction)
    return status


def finish_if_complete(prediction: PolicyPrediction) -> None:
    """After a prediction: when every prediction has ended, settle a split on the
    fastest policy with more seeds while the deadline leaves time, else rank by
    simulation."""
    with transaction.atomic():
        rec = Recommendation.objects.select_for_update().get(pk=prediction.recommendation_id)
        if rec.status != RecommendationStatus.COMPUTING:
            return
        predictions = list(rec.predictions.all())
        if any(p.status not in TERMINAL_RUN_STATUSES for p in predictions):
            return
        _finalize_with_predictions(rec, predictions)


def _settling_runs(rec: Recommendation, predictions: list[PolicyPrediction],
                   contenders: dict[str, dict[int, int]]) -> dict[str, list[int]]:
    """The round of more seeds that would settle a split among the ``contenders``
    (``seeds.settling_round``), if the deadline leaves time for it at the contest's
    slowest run so far; else nothing."""
    runs = settling_round(contenders, {(p.policy, p.seed) for p in predictions},
                          settings.HX_PREDICTION_MAX_SEEDS, settings.HX_PREDICTION_PROCESSES)
    if not runs:
        return {}
    durations = [p.duration_seconds for p in predictions
                 if p.policy in runs and p.duration_seconds is not None]
    round_seconds = max(durations, default=expected_run_seconds(rec)) * math.ceil(
        sum(map(len, runs.values())) / settings.HX_PREDICTION_PROCESSES)
    left = (rec.deadline - timezone.now()).total_seconds()
    return runs if round_seconds <= left * constants.LIVE_DEADLINE_SHARE else {}


def _queue(rec: Recommendation, runs: dict[str, list[int]]) -> None:
    """Create and send the settling round's predictions (``rec`` is locked and every
    earlier prediction has ended, so a round is queued once)."""
    rec.inputs = {**rec.inputs, "extra_seeds": sorted(
        set(rec.inputs.get("extra_seeds", [])).union(*runs.values()))}
    for policy, seeds in sorted(runs.items()):
        for seed in seeds:
            enqueue(PolicyPrediction.objects.create(
                recommendation=rec, policy=policy, user=rec.user, seed=seed,
                parameters=prediction_config(rec.machine, rec, policy, seed)))


def answer_at_deadline(rec: Recommendation) -> None:
    """Past the deadline (``rec`` locked, still computing): rank with the simulations
    that finished, the analytic score standing in for the others, and cancel the
    predictions not started yet (nothing will use them)."""
    rec.predictions.filter(status=RunStatus.PENDING).update(
        status=RunStatus.CANCELLED, finished_at=timezone.now(),
        error="not needed: the recommendation was answered at its deadline")
    _finalize_with_predictions(rec, list(rec.predictions.all()), at_deadline=True)


def _finalize_with_predictions(rec: Recommendation, predictions: list,
                               at_deadline: bool = False) -> None:
    """Rank with the predictions' results: final, unless the seeds split on the fastest
    policy that can be recommended and a round of more seeds fits before the deadline
    (not at it): then that round is queued and the ranking so far is shown meanwhile."""
    analytic = analytic_factors(rec.inputs["candidates"], rec.inputs.get("held_fraction", 0))
    calibrated = rec.inputs.get("calibrated_cycles") or {}
    extra = rec.inputs.get("extra_seeds", [])
    per_seed = seed_cycles(predictions, extra)
    cycles = mean_cycles(per_seed)
    late = f"did not finish within {constants.DEADLINE_SECONDS} s"
    if not cycles:
        if calibrated:
            store_ranking(rec, calibrated_factors(analytic, calibrated),
                          RecommendationMethod.CALIBRATED, final=True,
                          cycles={p: round(c) for p, c in calibrated.items()},
                          note=(f"live simulations {late}; " if at_deadline else
                                "every live simulation failed; ")
                          + rec.inputs.get("calibration_note", "calibrated"))
            return
        store_ranking(rec, analytic, RecommendationMethod.ANALYTIC, final=True,
                       note=f"simulations {late}; ranked by the analytic score" if at_deadline
                       else "every simulation failed; ranked by the analytic score")
        return
    if rec.inputs.get("close_call"):
        factors = calibrated_factors(analytic, settled_close_call(
            calibrated, cycles, rec.inputs["close_call"]))
    else:
        factors = mixed_factors(analytic, cycles, calibrated,
                                default=rec.inputs["default_policy"])
    missing = sorted(set(analytic) - set(cycles))
    asked = {p.policy for p in predictions}
    unasked = [p for p in missing if p not in asked]  # outside a close call settled live
    missing = [p for p in missing if p in asked]
    stand_ins = _stand_ins(missing, calibrated)
    if missing and at_deadline:
        note = f"simulated: {', '.join(sorted(cycles))}; {stand_ins} (their simulations {late})"
    elif missing:
        note = f"no simulation result for {', '.join(missing)}: {stand_ins} used there"
    else:
        note = ""
    if unasked:
        note = (f"the calibration's close call between {', '.join(sorted(asked))} settled by "
                f"live simulation; {_stand_ins(unasked, calibrated)}, which were not that "
                f"close; " + rec.inputs.get("calibration_note", "calibrated")
                + (f"; {note}" if note else ""))
    simulated = {p: c for p, c in per_seed.items() if p in factors}
    # the study's rules refuse some policies whatever their time: the seeds need to
    # order only the others (a refused one needs a clear win, not a close one)
    refused = refused_policies(rec.inputs["candidates"], rec.inputs.get("held_fraction", 0.0),
                               factors)
    contenders = {p: c for p, c in simulated.items() if p not in refused}
    settling = {} if at_deadline else _settling_runs(rec, predictions, contenders)
    if settling:
        _queue(rec, settling)
    verdict = _seed_verdict(simulated, contenders, extra)
    counted = sorted({s for c in simulated.values() for s in c} & set(extra))
    caveat = seed_caveat(contenders, counted,
                         asked_extra={p.seed for p in predictions if p.seed in extra})
    if settling:
        seeds = sorted(set().union(*settling.values()))
        caveat += (f"; running seed{'s' if len(seeds) > 1 else ''} "
                   f"{', '.join(map(str, seeds))} for {join_words(sorted(settling))} to "
                   "settle it")
    if caveat:
        note = f"{note}; {caveat}" if note else caveat
    stand_in_cycles = {p: round(calibrated[p]) for p in missing + unasked if p in calibrated}
    sources = {**dict.fromkeys(stand_in_cycles, str(RecommendationMethod.CALIBRATED)),
               **dict.fromkeys(cycles, str(RecommendationMethod.SIMULATION))}
    store_ranking(rec, factors, RecommendationMethod.SIMULATION, final=not settling,
                  cycles={**stand_in_cycles, **cycles}, sources=sources, note=note,
                  seeds=verdict)


def _seed_verdict(simulated: dict[str, dict[int, int]],
                  contenders: dict[str, dict[int, int]], extra_seeds: list[int]
                  ) -> SeedVerdict:
    """What the seeds say: every simulated policy's cycles per seed; the fastest of the
    ``contenders`` (the policies that can be recommended), its rivals among them, and
    the paired difference against it of each that ran extra seeds to settle it."""
    scales = seed_scales(simulated)
    if len(contenders) < 2:
        return NO_SEEDS._replace(cycles=simulated, scales=scales)
    fastest, rivals = seed_rivals(contenders)
    differences = {p: d for p, c in contenders.items()
                   if p != fastest and set(c) & set(extra_seeds)
                   and (d := paired_difference(contenders, p, fastest)) is not None}
    return SeedVerdict(simulated, fastest, rivals, differences, scales)


def _stand_ins(missing: list[str], calibrated: dict[str, float]) -> str:
    """Which score stands in for the policies without a live result, in words."""
    parts = []
    if stood_in := [p for p in missing if p in calibrated]:
        parts.append(f"calibrated for {', '.join(stood_in)}")
    if rest := [p for p in missing if p not in calibrated]:
        parts.append(f"analytic score for {', '.join(rest)}")
    return "; ".join(parts)


def mixed_factors(analytic: dict[str, float], *measured: dict[str, float],
                  default: str) -> dict[str, float]:
    """Every policy's factor relative to one reference: from the first of ``measured``
    (simulated, then calibrated cycles) that has both the policy and the reference,
    else the analytic score's ratio. The reference is the site's default policy when
    the first layer has it, else that layer's fastest."""
    first = measured[0]
    reference = default if default in first else min(first, key=first.get)
    out = {}
    for policy in analytic:
        layer = next((m for m in measured if policy in m and reference in m), None)
        out[policy] = (layer[policy] / layer[reference] if layer is not None
                       else analytic[policy] / analytic[reference])
    return out


def settled_close_call(calibrated: dict[str, float], live: dict[str, float],
                       close_call: list[str]) -> dict[str, float]:
    """The calibrated cycles with the close call's policies that have a live result
    reordered by it: they take their own calibrated times, sorted, in their live order.
    The calibration cannot order them, the live runs can; but live and calibrated
    times are not on one scale (the calibration's machine is not this one), so the
    live times order the close call without moving it among the other policies."""
    measured = [p for p in close_call if p in live and p in calibrated]
    slots = sorted(calibrated[p] for p in measured)
    order = sorted(measured, key=lambda p: (live[p], p))
    return {**calibrated, **dict(zip(order, slots, strict=True))}


def calibrated_factors(analytic: dict[str, float], calibrated: dict[str, float]
                       ) -> dict[str, float]:
    """The calibration's factors, the analytic score's for policies it lacks."""
    return mixed_factors(analytic, calibrated, default=BASELINE_POLICY)


def expected_run_seconds(rec: Recommendation) -> float:
    """One live prediction run's expected seconds before the shape has a calibration:
    busy endpoints times the cycles a study-volume kernel runs, at the engine's rate
    (``constants.ENDPOINT_CYCLES_PER_SECOND``), times the kernel's packets per rank
    over those of its reference job: the all-to-all past 1,024 ranks sends more per
    rank, and runs longer, than the kernels the constant was measured on."""
    busy = rec.node_count + len(rec.inputs.get("held_endpoints", ()))
    cycles = constants.EXPECTED_RUN_CYCLES * _volume_factor(rec.pattern, rec.node_count)
    return busy * cycles / constants.ENDPOINT_CYCLES_PER_SECOND


def _volume_factor(pattern: str, node_count: int) -> float:
    """The job's kernel volume per rank over the same kernel's on the reference job
    (``constants.EXPECTED_RUN_RANKS`` ranks); 1 for open-loop traffic."""
    kernel = constants.KERNELS[pattern]
    ranks = max(simulation.usable_ranks(kernel, node_count), 2)
    packets = simulation.study_packets_per_rank(kernel, ranks)
    reference = simulation.study_packets_per_rank(kernel, constants.EXPECTED_RUN_RANKS)
    return packets / reference if packets and reference else 1.0


def prediction_progress(rec: Recommendation) -> dict[str, int]:
    """How many of the recommendation's simulations exist and how many have ended
    (those of the computation it shares, if it shares one)."""
    statuses = list(PolicyPrediction.objects.filter(
        recommendation_id=rec.shared_from_id or rec.pk).values_list("status", flat=True))
    return {"simulations": len(statuses),
            "done": sum(s in TERMINAL_RUN_STATUSES for s in statuses)}
