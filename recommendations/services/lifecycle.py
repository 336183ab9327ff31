"""Asking for a recommendation: validate, answer from the cache or create one
(analytic ranking at once, one prediction per policy enqueued), answer late
ones analytically, accept one atomically."""

from __future__ import annotations

import hashlib
import json
import math
from datetime import timedelta
from typing import Any

import numpy as np
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from allocation.hyperx.fragmentation import broken_switches
from allocation.hyperx.patterns import canonical_pattern
from allocation.models import CommPattern, Job, Machine
from allocation.services import jobs, machines, slurm, slurm_sync
from health import services as health
from hxportal import ownership
from hxportal.errors import ConflictError
from hxportal.runs import enqueue
from recommendations import constants
from recommendations.choices import CalibrationStatus
from recommendations.models import (
    PolicyPrediction,
    Recommendation,
    RecommendationMethod,
    RecommendationStatus,
)
from recommendations.services import calibration
from recommendations.services.predictions import (
    answer_at_deadline,
    calibrated_factors,
    expected_run_seconds,
    prediction_config,
)
from recommendations.services.ranking import analytic_factors, share_outcome, store_ranking


def default_policy() -> str:
    """The site's default policy (admin setting, else ``HX_DEFAULT_POLICY``)."""
    return machines.default_policy()


def _times(t_cmpt, t_comm, wall_time, compute_fraction) -> tuple[float, float]:
    """(t_cmpt, t_comm) from what the user gave, validated like the spare API."""
    if wall_time is not None:
        if t_cmpt is not None or t_comm is not None:
            raise ValidationError({"wall_time": ["give either wall_time or t_cmpt/t_comm"]})
        fraction = 0.5 if compute_fraction is None else compute_fraction
        if not 0 < fraction <= 1:
            raise ValidationError({"compute_fraction": ["must be in (0, 1]"]})
        return wall_time * fraction, wall_time * (1 - fraction)
    if t_cmpt is None:
        raise ValidationError({"t_cmpt": ["give t_cmpt (and t_comm) or wall_time"]})
    return t_cmpt, t_comm or 0.0


def occupancy_fingerprint(available: np.ndarray, owner: np.ndarray) -> str:
    """Changes whenever a node is taken, freed, drained or returned."""
    digest = hashlib.sha256()
    digest.update(np.packbits(available).tobytes())
    digest.update(owner.tobytes())
    return digest.hexdigest()


def _cache_key(machine: Machine, estimate, occupancy: str, inputs: dict[str, Any]) -> str:
    payload = {"machine": machine.pk, "occupancy": occupancy,
               "estimate": estimate.pk if estimate else None, **inputs}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _fresh_answers(machine: Machine, key: str, user):
    """Recent answers to the same question that ``user`` may read (under
    ``HX_PRIVATE_DATA`` only their own: another's must not even be known to exist),
    newest first; their large JSON fields load only when read (a repeat is usually
    answered from the rendered-answer cache)."""
    since = timezone.now() - timedelta(seconds=constants.CACHE_SECONDS)
    answers = (Recommendation.objects.select_related("machine", "user").defer(
        "inputs", "ranking", "recommended").filter(
        machine=machine, cache_key=key, created_at__gte=since,
        status__in=[RecommendationStatus.COMPUTING, RecommendationStatus.READY])
        .order_by("-created_at", "-id"))
    return ownership.readable(answers, user, "user")


def _own_repeat(answers, user, name: str, external_id: str) -> Recommendation | None:
    """The asker's own row for this very request (same name and external id), unless
    it is an outdated stand-in."""
    repeat = answers.filter(user=user, name=name, external_id=external_id).first()
    return None if repeat is None or _outdated_stand_in(repeat) else repeat


def _outdated_stand_in(answer: Recommendation) -> bool:
    """Whether ``answer`` is the analytic score given while no calibration could answer
    the question, and one now can: asked again, the question gets the calibrated answer,
    not the stand-in for the rest of ``CACHE_SECONDS`` (the calibration of a large
    shape may finish within them)."""
    if (answer.method != RecommendationMethod.ANALYTIC or answer.calibration_id is not None
            or answer.status != RecommendationStatus.READY or not answer.inputs.get("simulate")):
        return False
    return calibration.calibrated_answer(answer.machine, answer.pattern, answer.node_count,
                                         answer.inputs["held_fraction"]) is not None


def request_recommendation(*, user, machine: Machine, node_count: int, pattern: str,
                           name: str = "job", external_id: str = "",
                           t_cmpt: float | None = None, t_comm: float | None = None,
                           wall_time: float | None = None,
                           compute_fraction: float | None = None,
                           p_abn: float | None = None, alpha_abn: float | None = None,
                           t_bench: float | None = None,
                           simulate: bool = True) -> tuple[Recommendation, bool]:
    """Return (recommendation, cached). Within ``constants.CACHE_SECONDS`` an identical
    question on an unchanged machine reuses the stored computation: the asker's own
    repeat (same name and external id) gets the same row; any other request gets a
    row of its own that shares the ranking (or the simulations still running), never
    another's row, and only of rows the asker may read (``HX_PRIVATE_DATA``). An
    analytic stand-in is not reused once the shape's calibration answers the question."""
    pattern = canonical_pattern(pattern)
    if pattern not in CommPattern.values:
        raise ValidationError({"pattern": [f"must be one of {', '.join(CommPattern.values)}"]})
    t_cmpt_s, t_comm_s = _times(t_cmpt, t_comm, wall_time, compute_fraction)
    snapshot = available, owner = jobs.occupancy(machine)  # the request's one read
    free = int(available.sum())
    if node_count > free:
        raise ValidationError({"node_count": [
            f"need {node_count} nodes, {free} free and up on {machine.name}"]})
    inputs = {"node_count": node_count, "pattern": pattern, "t_cmpt": t_cmpt_s,
              "t_comm": t_comm_s, "wall_time": wall_time,
              "compute_fraction": compute_fraction, "p_abn": p_abn,
              "alpha_abn": alpha_abn, "t_bench": t_bench, "simulate": simulate,
              "default_policy": default_policy()}
    estimate = health.latest_estimate(machine)  # the spare model's, read once too
    key = _cache_key(machine, estimate, occupancy_fingerprint(available, owner), inputs)
    # A repeat needs no lock; otherwise lock the machine and look again, so identical
    # concurrent questions compute once.
    answers = _fresh_answers(machine, key, user)
    if (repeat := _own_repeat(answers, user, name, external_id)) is not None:
        return refresh(repeat), True
    with transaction.atomic():
        Machine.objects.select_for_update().get(pk=machine.pk)
        if (repeat := _own_repeat(answers, user, name, external_id)) is not None:
            return refresh(repeat), True
        source = answers.first()
        if source is not None and not _outdated_stand_in(source):
            return _share(source, user, name, external_id), True
        rec = _create(user, machine, name, external_id, inputs, key, snapshot, estimate)
    return rec, False


def _share(source: Recommendation, user, name: str, external_id: str) -> Recommendation:
    """A new row for ``user`` that reuses ``source``'s computation: its ranking when
    finished, else its simulations still running (``store_ranking`` finishes both).
    Only the computation is copied: owner, name, external id and id are the asker's."""
    root = Recommendation.objects.select_for_update().get(
        pk=source.shared_from_id or source.pk)
    rec = Recommendation.objects.create(
        machine=root.machine, user=user, name=name, external_id=external_id,
        node_count=root.node_count, pattern=root.pattern, inputs=root.inputs,
        cache_key=root.cache_key, deadline=root.deadline, shared_from=root)
    return refresh(rec)


def _create(user, machine: Machine, name: str, external_id: str, inputs: dict,
            key: str, snapshot: tuple[np.ndarray, np.ndarray], estimate) -> Recommendation:
    """The recommendation on the occupancy ``snapshot``, which it keeps (held and down
    endpoints, each candidate's endpoints): every ranking pass, each prediction and
    the accept read the machine as it was asked about, never a newer view of it."""
    candidates = jobs.compare_policies(machine, inputs["node_count"], snapshot=snapshot)
    feasible = [c for c in candidates if not c.error]
    if not feasible:
        raise ValidationError({"node_count": [candidates[0].error]})
    rec = Recommendation.objects.create(
        machine=machine, user=user, name=name, external_id=external_id,
        node_count=inputs["node_count"], pattern=inputs["pattern"], inputs=inputs,
        cache_key=key, deadline=timezone.now() + timedelta(seconds=constants.DEADLINE_SECONDS))
    available, owner = snapshot
    held = np.nonzero(owner > 0)[0]
    rec.inputs = {**inputs, "held_fraction": float(held.size / max(owner.size, 1)),
                  "held_endpoints": held.tolist(),
                  "down_endpoints": np.nonzero(~available & (owner == 0))[0].tolist(),
                  "estimate_id": estimate.pk if estimate else None,
                  "candidates": [{**c.as_dict(), "endpoints": list(c.endpoints),
                                  "broken_switches": broken_switches(
                                      available, np.asarray(c.endpoints, dtype=np.int64),
                                      machine.concentration) if c.endpoints else 0}
                                 for c in candidates]}
    factors = analytic_factors(rec.inputs["candidates"], rec.inputs["held_fraction"])
    if not inputs["simulate"]:
        store_ranking(rec, factors, RecommendationMethod.ANALYTIC, final=True,
                      estimate=estimate)
        return rec
    calibrated = calibration.calibrated_answer(machine, inputs["pattern"],
                                               inputs["node_count"], rec.inputs["held_fraction"])
    live = _live_fits(rec, len(feasible), calibrated.run_seconds if calibrated else None)
    simulated = [c.policy for c in feasible] if live else []
    if calibrated is not None:
        rec.calibration = calibrated.calibration
        rec.inputs["calibrated_cycles"] = calibrated.cycles
        rec.inputs["calibrated_spread"] = calibrated.spread
        close = calibration.close_call(rec.inputs["candidates"], calibrated.cycles,
                                       calibrated.spread)
        if not live and len(close) > 1 and _live_fits(rec, len(close), calibrated.run_seconds,
                                                      key="close_call_live_seconds"):
            simulated = rec.inputs["close_call"] = close  # the calibration cannot order them
        rec.inputs["calibration_note"] = calibrated.note() + calibration.fragmentation_caveat(
            machine, rec.inputs["candidates"], rec.inputs["held_fraction"],
            inputs["node_count"]) + calibration.line_sharing_caveat(
            machine, rec.inputs["candidates"], rec.inputs["held_endpoints"],
            rec.inputs["held_fraction"], inputs["node_count"], calibrated.cycles
        ) + calibration.close_call_caveat(rec.inputs["candidates"], calibrated.cycles,
                                          calibrated.spread)
        stand_in = calibrated_factors(factors, calibrated.cycles)
        store_ranking(rec, stand_in, RecommendationMethod.CALIBRATED, final=not simulated,
                      cycles={p: round(c) for p, c in calibrated.cycles.items()},
                      note=_calibrated_note(rec.inputs["calibration_note"], simulated, live,
                                            set(stand_in) - set(calibrated.cycles)),
                      estimate=estimate)
    elif not live:
        store_ranking(rec, factors, RecommendationMethod.ANALYTIC, final=True,
                      note=_calibrating_note(machine), estimate=estimate)
    else:
        store_ranking(rec, factors, RecommendationMethod.ANALYTIC, final=False,
                      estimate=estimate)
    for candidate in feasible:  # one task per policy and seed: the seeds spread too
        if candidate.policy in simulated:
            for seed in constants.prediction_seeds():
                prediction = PolicyPrediction.objects.create(
                    recommendation=rec, policy=candidate.policy, user=user, seed=seed,
                    parameters=prediction_config(machine, rec, candidate.policy, seed))
                enqueue(prediction)
    return rec


def _live_fits(rec: Recommendation, policies: int, run_seconds: float | None,
               key: str = "expected_live_seconds") -> bool:
    """Whether the live simulations of ``policies`` policies are expected to end well
    within the deadline on the worker processes predictions can count on (the
    expected seconds kept in ``rec.inputs[key]``): one run takes ``run_seconds`` (the
    calibration's own run times), else the engine's rate estimate. Each (policy,
    seed) run is a task of its own, so the runs spread over the processes in rounds:
    more processes than runs do not help."""
    seconds = run_seconds if run_seconds is not None else expected_run_seconds(rec)
    runs = policies * len(constants.prediction_seeds())
    expected = seconds * math.ceil(runs / settings.HX_PREDICTION_PROCESSES)
    rec.inputs[key] = round(expected, 2)
    return expected <= constants.DEADLINE_SECONDS * constants.LIVE_DEADLINE_SHARE


def _calibrated_note(note: str, simulated: list[str], live: bool, analytic: set[str]) -> str:
    """The calibrated answer's note, and which live simulations are running: all
    policies' (``live``), or those of its close call."""
    if analytic:
        note += f"; analytic score for {', '.join(sorted(analytic))} (not calibrated)"
    if live:
        note += "; live simulations running"
    elif simulated:
        note += f"; simulating {', '.join(simulated)} live to settle it"
    return note[:constants.NOTE_LENGTH]


def _calibrating_note(machine: Machine) -> str:
    """Why an answer is analytic: the machine is too large to simulate within the
    deadline and its shape's calibration has no result for this job (yet): running
    (started now if the shape had none), failed or cancelled, or none at all."""
    latest, _ = calibration.start_calibration_if_missing(machine)
    if latest is None:
        note = ("too large to simulate within the deadline and not calibrated "
                "(HX_CALIBRATE_AUTOMATICALLY is off): ranked by the analytic score")
    elif latest.status == CalibrationStatus.RUNNING:
        progress = calibration.calibration_progress(latest)
        note = (f"calibration {latest.pk} of this machine shape is running "
                f"({progress['done']} of {progress['total']} runs): ranked by the analytic "
                "score until it answers")
    else:
        note = (f"too large to simulate within the deadline; calibration {latest.pk} of this "
                f"machine shape {latest.status} without a result for this job"
                + (f" ({latest.note})" if latest.note else "")
                + ": ranked by the analytic score; start a new calibration to answer it")
    return note[:constants.NOTE_LENGTH]


def refresh(rec: Recommendation) -> Recommendation:
    """Past the deadline, a recommendation still computing is answered with the
    simulations that finished and the analytic score for the others; one sharing
    another's computation takes its answer once that one has it."""
    if rec.status != RecommendationStatus.COMPUTING:
        return rec
    if rec.shared_from_id is not None and (shared := _refresh_sharer(rec)) is not None:
        return shared
    if timezone.now() < rec.deadline:
        return rec
    with transaction.atomic():
        rec = Recommendation.objects.select_for_update().get(pk=rec.pk)
        if rec.status == RecommendationStatus.COMPUTING:
            answer_at_deadline(rec)
    return rec


def _refresh_sharer(rec: Recommendation) -> Recommendation | None:
    """``rec`` with the shared computation's answer, or None while that has none.
    (``store_ranking`` normally gives it already; this catches up a row that missed
    it, and a shared computation past its deadline is answered here first.)"""
    source = Recommendation.objects.filter(pk=rec.shared_from_id).first()
    if source is not None:
        source = refresh(source)
    if source is None or source.status == RecommendationStatus.COMPUTING or \
            source.recommended is None:
        return None
    with transaction.atomic():
        rec = Recommendation.objects.select_for_update().get(pk=rec.pk)
        if rec.status == RecommendationStatus.COMPUTING:
            share_outcome(source, rec)
    return rec


def expire_overdue() -> int:
    """Beat task body: answer every overdue recommendation (:func:`refresh`)."""
    overdue = Recommendation.objects.filter(status=RecommendationStatus.COMPUTING,
                                            deadline__lt=timezone.now())
    count = 0
    for rec in overdue:
        refresh(rec)
        count += 1
    return count


#: Proposals an accept tries before it gives up on nodes taken meanwhile.
ACCEPT_ATTEMPTS = 3


def accept(rec: Recommendation, user, policy: str | None = None) -> Job:
    """Allocate the recommended (or chosen) policy with N_node + N_spare nodes, once.

    What is allocated is what was ranked: the candidate's primaries (the partition
    its prediction simulated) and the spares the ranking chose around them. A spare
    taken meanwhile is chosen again around the same primaries. When a primary was
    taken meanwhile, the simulated partition no longer exists: the policy proposes
    anew on the live machine, and the recommendation's note says that the job did
    not get the simulated partition, and why. On a machine linked to Slurm the
    portal first syncs, then checks that Slurm has every node free at that moment;
    a node Slurm holds counts as taken. Slurm unreachable: nothing is allocated (a
    409 that says so).
    """
    policy, entry = _acceptable(rec, policy)
    linked = slurm.linked_link(rec.machine) is not None
    if linked:
        try:
            slurm_sync.sync_machine(rec.machine)
        except slurm_sync.SyncFailed as exc:
            raise slurm.SlurmUnavailable(f"Slurm cannot be read now ({exc}); nothing was "
                                         "allocated", field="machine") from exc
    refused: set[int] = set()  # endpoints Slurm holds that the portal did not know of
    for _ in range(ACCEPT_ATTEMPTS):
        candidate, anew = _proposal(rec, policy, entry, refused)
        if linked:
            taken = slurm.not_free(candidate.hostnames)
            if taken:
                refused |= {e for e, h in zip(candidate.endpoints, candidate.hostnames,
                                              strict=True) if h in taken}
                continue
        try:
            return _record_accept(rec, user, policy, entry, candidate, anew)
        except jobs.PartitionTaken:
            continue
    raise ConflictError(f"the nodes proposed for {policy} were taken {ACCEPT_ATTEMPTS} times "
                        "in a row (by Slurm or the portal); ask again", field="policy")


def _acceptable(rec: Recommendation, policy: str | None) -> tuple[str, dict]:
    """(policy, its ranking entry), or why this recommendation cannot be accepted."""
    if rec.status == RecommendationStatus.ACCEPTED:
        raise ConflictError(f"recommendation {rec.pk} was already accepted (job "
                            f"{rec.job_id})", field="status")
    if rec.status != RecommendationStatus.READY:
        raise ConflictError(f"recommendation {rec.pk} is {rec.status}", field="status")
    policy = policy or rec.recommended["policy"]
    entry = next((e for e in rec.ranking if e.get("policy") == policy and "error" not in e),
                 None)
    if entry is None:
        raise ValidationError({"policy": [f"{policy} is not a feasible candidate here"]})
    return policy, entry


def _proposal(rec: Recommendation, policy: str, entry: dict, refused: set[int]):
    """(candidate, proposed anew): the ranked primaries and spares when all are free;
    the ranked primaries with spares chosen again around them; else, the primaries
    being taken, the policy's partition of N + spares on the live occupancy. Never a
    refused node."""
    machine, n_spare = rec.machine, entry["n_spare"]
    available, owner = jobs.occupancy(machine)
    available[list(refused)] = False
    busy = (owner > 0) | ~available
    ranked = next((c for c in rec.inputs.get("candidates", []) if c["policy"] == policy), {})
    primaries, seed = list(ranked.get("endpoints") or ()), ranked.get("seed", 0)
    spares = [n.index for n in machines.resolve_hostlist(machine, entry["spares_hostlist"])] \
        if entry.get("spares_hostlist") else []
    if len(spares) == n_spare:
        candidate = jobs.propose_around(machine, policy, primaries + spares, 0, seed,
                                        available, busy)
        if not candidate.error:
            return candidate, False
    candidate = jobs.propose_around(machine, policy, primaries, n_spare, seed, available, busy)
    if not candidate.error:
        return candidate, False
    candidate = jobs.propose(machine, policy, rec.node_count + n_spare, seed,
                             available=available, busy=busy)
    if candidate.error:
        raise ValidationError({"node_count": [
            f"{policy} cannot place {rec.node_count} + {n_spare} nodes now: {candidate.error}"]})
    return candidate, True


def _record_accept(rec: Recommendation, user, policy: str, entry: dict, candidate,
                   anew: bool) -> Job:
    with transaction.atomic():
        rec = Recommendation.objects.select_for_update().get(pk=rec.pk)
        _acceptable(rec, policy)  # accepted meanwhile by a concurrent request?
        job = jobs.create_job(owner=user, machine=rec.machine, name=rec.name,
                              external_id=rec.external_id, node_count=rec.node_count,
                              pattern=rec.pattern, t_cmpt=rec.inputs["t_cmpt"],
                              t_comm=entry["t_comm"] or None)
        job = jobs.allocate_candidate(job, candidate)
        rec.status = RecommendationStatus.ACCEPTED
        rec.job = job
        rec.accepted_at = timezone.now()
        fields = ["status", "job", "accepted_at"]
        if anew:
            rec.note = (f"{rec.note} " if rec.note else "") + (
                f"Accepted on nodes {policy} proposed anew: some of the {rec.node_count} "
                "ranked (and simulated) nodes were taken before the accept.")
            rec.note = rec.note[:constants.NOTE_LENGTH]
            fields.append("note")
        rec.save(update_fields=fields)
        return job
