"""The write path for per-job recommendations: rank every policy on the live
occupancy, combine with the spare model, accept atomically.

How a recommendation is made
----------------------------
1. Every online policy proposes a partition for the job on the current
   occupancy (a dry run of ``allocation.hyperx.allocate``), with its properties
   and the number of whole free switches it would break.
2. An *analytic* ranking is stored at once. Its communication factor per policy
   is ``max(1, 1 / PB) * (1 + LOCALITY_PENALTY * u)`` when the partition lacks
   switch locality (``u``: fraction of the machine other jobs hold; their
   traffic shares its switches), else ``max(1, 1 / PB)``; PB is the exact
   partition bandwidth when computed, else the bound. An endpoint cannot
   inject more than 1 phit/cycle, so PB above 1 does not speed uniform traffic.
3. One packet-level prediction per policy runs as a Celery task
   (:class:`PolicyPrediction` rows) in the engine's faithful study mode with
   the study's routing (Omni-WAR, shared VCs): the job's pattern on its
   candidate, the other jobs' nodes sending random-permutation background
   traffic at full load (the engine's ``background`` scenario), over
   ``PREDICTION_SEEDS`` at the study's kernel volume (shorter runs measure
   transients: at half the volume the ranking on the reference case already
   differs). When all finish, the
   ranking is redone from the mean simulated completion times. If they do not
   finish within ``DEADLINE_SECONDS``, the analytic ranking stands and says so.
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
   gives N_spare and E[C] per policy. The recommendation is the lowest E[C]
   among candidates not refused.

Answers are cached by machine occupancy and job shape for ``CACHE_SECONDS``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from datetime import timedelta
from typing import Any

import numpy as np
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from allocation.hyperx.fragmentation import broken_switches
from allocation.models import CommPattern, Job, Machine
from allocation.services import jobs, machines
from health import services as health
from hxportal import hostlists
from hxportal.errors import ConflictError
from hxportal.models import TERMINAL_RUN_STATUSES, RunStatus
from hxportal.runs import RunReporter, enqueue, execute
from recommendations.models import (
    PolicyPrediction,
    Recommendation,
    RecommendationMethod,
    RecommendationStatus,
)
from simulation.engine import SimConfig, simulate
from simulation.engine.config import canonical_pattern, study_message_packets

DEADLINE_SECONDS = 30
CACHE_SECONDS = 600
LOCALITY_PENALTY = 0.5
#: Seeds of each policy's prediction (the mean completion time ranks).
PREDICTION_SEEDS = (0, 1)
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
KERNELS = {
    CommPattern.ALL_TO_ALL: "all2all",
    CommPattern.ALL_REDUCE: "allreduce",
    CommPattern.STENCIL_4: "stencil4",
    CommPattern.STENCIL_8: "stencil8",
    CommPattern.RANDOM_INVOLUTION: "random_involution",
    CommPattern.UNIFORM: "uniform",
    CommPattern.UNKNOWN: "uniform",
}


def default_policy() -> str:
    """The site's default policy (admin setting, else ``HX_DEFAULT_POLICY``)."""
    return machines.default_policy()


# ----------------------------------------------------------------- inputs
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


def _cache_key(machine: Machine, occupancy: str, inputs: dict[str, Any]) -> str:
    estimate = health.latest_estimate(machine)
    payload = {"machine": machine.pk, "occupancy": occupancy,
               "estimate": estimate.pk if estimate else None, **inputs}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _fresh_cached(machine: Machine, key: str) -> Recommendation | None:
    """The answer to the same question, if recent; its large JSON fields load only
    when read (a repeat is usually answered from the rendered-answer cache)."""
    since = timezone.now() - timedelta(seconds=CACHE_SECONDS)
    return (Recommendation.objects.select_related("machine", "user").defer(
        "inputs", "ranking", "recommended").filter(
        machine=machine, cache_key=key, created_at__gte=since,
        status__in=[RecommendationStatus.COMPUTING, RecommendationStatus.READY])
        .order_by("-created_at").first())


def request_recommendation(*, user, machine: Machine, node_count: int, pattern: str,
                           name: str = "job", external_id: str = "",
                           t_cmpt: float | None = None, t_comm: float | None = None,
                           wall_time: float | None = None,
                           compute_fraction: float | None = None,
                           p_abn: float | None = None, alpha_abn: float | None = None,
                           t_bench: float | None = None,
                           simulate: bool = True) -> tuple[Recommendation, bool]:
    """Return (recommendation, cached). Identical questions on an unchanged machine
    within ``CACHE_SECONDS`` get the stored answer (or the one still computing)."""
    pattern = canonical_pattern(pattern)
    if pattern not in CommPattern.values:
        raise ValidationError({"pattern": [f"must be one of {', '.join(CommPattern.values)}"]})
    t_cmpt_s, t_comm_s = _times(t_cmpt, t_comm, wall_time, compute_fraction)
    available, owner = jobs.occupancy(machine)
    free = int(available.sum())
    if node_count > free:
        raise ValidationError({"node_count": [
            f"need {node_count} nodes, {free} free and up on {machine.name}"]})
    inputs = {"node_count": node_count, "pattern": pattern, "t_cmpt": t_cmpt_s,
              "t_comm": t_comm_s, "wall_time": wall_time,
              "compute_fraction": compute_fraction, "p_abn": p_abn,
              "alpha_abn": alpha_abn, "t_bench": t_bench, "simulate": simulate,
              "default_policy": default_policy()}
    key = _cache_key(machine, occupancy_fingerprint(available, owner), inputs)
    # A hit needs no lock; a miss locks the machine and looks again, so identical
    # concurrent questions create one recommendation.
    if (cached := _fresh_cached(machine, key)) is not None:
        return refresh(cached), True
    with transaction.atomic():
        Machine.objects.select_for_update().get(pk=machine.pk)
        if (cached := _fresh_cached(machine, key)) is not None:
            return refresh(cached), True
        rec = _create(user, machine, name, external_id, inputs, key)
    return rec, False


def _create(user, machine: Machine, name: str, external_id: str, inputs: dict,
            key: str) -> Recommendation:
    candidates = jobs.compare_policies(machine, inputs["node_count"])
    feasible = [c for c in candidates if not c.error]
    if not feasible:
        raise ValidationError({"node_count": [candidates[0].error]})
    rec = Recommendation.objects.create(
        machine=machine, user=user, name=name, external_id=external_id,
        node_count=inputs["node_count"], pattern=inputs["pattern"], inputs=inputs,
        cache_key=key, deadline=timezone.now() + timedelta(seconds=DEADLINE_SECONDS))
    available, owner = jobs.occupancy(machine)
    held = np.nonzero(owner > 0)[0]
    rec.inputs = {**inputs, "held_fraction": float(held.size / max(owner.size, 1)),
                  "held_endpoints": held.tolist(),
                  "candidates": [{**c.as_dict(), "endpoints": list(c.endpoints),
                                  "broken_switches": broken_switches(
                                      available, np.asarray(c.endpoints, dtype=np.int64),
                                      machine.concentration) if c.endpoints else 0}
                                 for c in candidates]}
    factors = analytic_factors(rec.inputs["candidates"], rec.inputs["held_fraction"])
    _store_ranking(rec, factors, RecommendationMethod.ANALYTIC, final=not inputs["simulate"])
    if inputs["simulate"]:

        for candidate in feasible:
            prediction = PolicyPrediction.objects.create(
                recommendation=rec, policy=candidate.policy, user=user,
                parameters=prediction_config(machine, rec, candidate.policy),
                seed=0)
            enqueue(prediction)
    return rec


# ----------------------------------------------------------------- scoring
def analytic_factors(candidates: list[dict], held_fraction: float) -> dict[str, float]:
    """Relative communication time per feasible policy (see the module docstring)."""
    factors = {}
    for c in candidates:
        props = c.get("properties")
        if not props:
            continue
        pb = props.get("pb_exact") or props.get("pb_bound")
        base = 1.0 if pb is None or pb >= 1 else 1.0 / pb  # None: one switch, no links
        if not props["switch_locality"]:
            base *= 1 + LOCALITY_PENALTY * held_fraction
        factors[c["policy"]] = base
    return factors


def _spares(rec: Recommendation, t_comm: float) -> dict | None:
    inputs = rec.inputs
    try:
        out = health.recommend(n_node=rec.node_count, t_cmpt=inputs["t_cmpt"], t_comm=t_comm,
                               machine=rec.machine, p_abn=inputs["p_abn"],
                               alpha_abn=inputs["alpha_abn"], t_bench=inputs["t_bench"],
                               max_curve_points=200)
    except ValidationError as exc:
        return {"error": "; ".join(exc.messages)}
    return out


def _reason(entry: dict, default: str, pattern: str) -> str:
    props = entry["properties"]
    pb = props.get("pb_exact") or props.get("pb_bound")
    pb_text = "PB ∞ (one switch)" if pb is None else f"PB {pb:.2f}"
    locality = "keeps switch locality" if props["switch_locality"] else "loses switch locality"
    text = f"{entry['policy']}: {pb_text}, {locality}"
    if entry.get("predicted_cycles"):
        text += f"; predicted {pattern} time {entry['predicted_cycles']:,} cycles"
    rel = entry["relative_comm"]
    if entry["policy"] != default and not math.isclose(rel, 1.0, rel_tol=0.005):
        text += f", {abs(1 - rel) * 100:.0f} % {'below' if rel < 1 else 'above'} {default}"
    return text


def _store_ranking(rec: Recommendation, factors: dict[str, float], method: str,
                   final: bool, cycles: dict[str, int] | None = None, note: str = "") -> None:
    default = rec.inputs["default_policy"]
    if default not in factors:
        default = min(factors, key=factors.get)
    t_comm = rec.inputs["t_comm"]
    entries = []
    for c in rec.inputs["candidates"]:
        if c["policy"] not in factors:
            entries.append({"policy": c["policy"], "error": c["error"]})
            continue
        rel = factors[c["policy"]] / factors[default]
        spares = _spares(rec, t_comm * rel)
        entry = {"policy": c["policy"], "hostlist": c["hostlist"],
                 "properties": c["properties"], "relative_comm": rel,
                 "broken_switches": c.get("broken_switches", 0),
                 "predicted_cycles": (cycles or {}).get(c["policy"]),
                 "t_comm": t_comm * rel, "spares": spares}
        if spares and "error" not in spares:
            entry.update(n_spare=spares["n_spare"], expected_cost=spares["expected_cost"],
                         expected_time=spares["expected_time"],
                         as_is_cost=spares["as_is_cost"])
        else:
            entry.update(n_spare=0, expected_cost=rec.node_count * (
                rec.inputs["t_cmpt"] + t_comm * rel), expected_time=None, as_is_cost=None)
        entry["reason"] = _reason(entry, default, rec.pattern)
        entries.append(entry)
    feasible = [e for e in entries if "error" not in e]
    _refuse_spread(feasible, rec.inputs.get("held_fraction", 0.0), simulated=bool(cycles))
    ranked = sorted(feasible, key=lambda e: (bool(e.get("refused")), e["expected_cost"],
                                             e["relative_comm"], e["policy"]))
    best = ranked[0]
    default_entry = next(e for e in ranked if e["policy"] == default)
    placed = jobs.propose(rec.machine, best["policy"], rec.node_count + best["n_spare"])
    nodes = list(placed.hostnames)
    recommended = {
        "policy": best["policy"], "n_spare": best["n_spare"],
        "hostlist": hostlists.compress(nodes[:rec.node_count]) or best["hostlist"],
        "spares_hostlist": hostlists.compress(nodes[rec.node_count:]),
        "nodelist": hostlists.compress(nodes) or best["hostlist"],
        "n_total": rec.node_count + best["n_spare"],
        "expected_cost": best["expected_cost"], "expected_time": best["expected_time"],
        "saving_vs_as_is": (best["as_is_cost"] / best["expected_cost"]
                            if best["as_is_cost"] else None),
        "saving_vs_default": default_entry["expected_cost"] / best["expected_cost"],
        "default_policy": default, "reason": best["reason"], "method": method,
        "curve": (best["spares"] or {}).get("curve"),
    }
    passed_over = [e for e in ranked if e.get("refused")
                   and e["expected_cost"] < best["expected_cost"]]
    if passed_over:
        recommended["reason"] += (
            f"; preferred over {', '.join(e['policy'] for e in passed_over)}, refused although "
            f"cheaper: {passed_over[0]['policy']} {passed_over[0]['refused']}")
    recommended["sbatch"] = sbatch_lines(rec, recommended)
    rec.ranking = ranked + [e for e in entries if "error" in e]
    rec.recommended = recommended
    rec.method = method
    rec.note = note
    if final:
        rec.status = RecommendationStatus.READY
        rec.finished_at = timezone.now()
    rec.save()


def _refuse_spread(entries: list[dict], held_fraction: float, simulated: bool) -> None:
    """Mark candidates without switch locality that the study's lessons rule out.

    Only when some candidate keeps switch locality (a job smaller than a
    switch cannot). Sets ``refused`` (why) on the entry and extends its reason.
    """
    local = [e for e in entries if e["properties"]["switch_locality"]]
    if not local:
        return
    best_local = min(local, key=lambda e: e["relative_comm"])
    for entry in entries:
        if entry["properties"]["switch_locality"]:
            continue
        why = []
        if held_fraction >= LOCALITY_LOAD:
            why.append(f"loses switch locality with {held_fraction:.0%} of the machine held "
                       "by other jobs (their traffic interferes and blocks it at shared "
                       "switches)")
        if entry.get("broken_switches"):
            why.append(f"breaks {entry['broken_switches']} whole free switches that later "
                       "jobs could use whole")
        if not why:
            continue
        # each cost the simulation cannot see must be paid by a clear simulated gain
        needed = CLEAR_WIN * len(why)
        gain = 1 - entry["relative_comm"] / best_local["relative_comm"]
        if simulated and gain >= needed:
            entry["reason"] += (f"; kept although it {' and '.join(why)}: simulated "
                                f"{gain:.0%} faster than {best_local['policy']}")
            continue
        shown = (f"only {gain:.0%} faster than" if gain > 0 else
                 "not faster than") if simulated else "no simulation yet against"
        entry["refused"] = (f"{' and '.join(why)}; {shown} {best_local['policy']} "
                            f"(needs {needed:.0%}, {CLEAR_WIN:.0%} for each)")
        entry["reason"] += f"; refused: {entry['refused']}"


def sbatch_lines(rec: Recommendation, recommended: dict) -> list[str]:
    """The lines a batch script needs to take the recommended nodes."""
    lines = [f"#SBATCH --nodes={recommended['n_total']}",
             f"#SBATCH --nodelist={recommended['nodelist']}",
             f"#SBATCH --comment=hxportal-recommendation={rec.pk}"]
    if recommended["n_spare"]:
        lines.append(f"# run the benchmark on all nodes, then: srun -N {rec.node_count} "
                     "-x <dropped> app   (hx_select_fastest prints <dropped>)")
    return lines


# ------------------------------------------------------------- predictions
def prediction_config(machine: Machine, rec: Recommendation, policy: str) -> dict:
    """Engine config for one policy's short simulation of the job's pattern."""
    kernel = KERNELS[rec.pattern]
    ranks = rec.node_count
    if kernel == "allreduce":
        ranks = 1 << (ranks.bit_length() - 1)  # Rabenseifner needs a power of two
    ranks = max(ranks, 2)
    volume = study_message_packets(kernel, ranks) // PREDICTION_VOLUME_DIVISOR
    config = {"sides": list(machine.sides), "concentration": machine.concentration,
              "routing": "omniwar", "vcs": max(4, 2 * len(machine.sides)),
              "vc_sets": "shared", "policy": policy,
              "scenario": "background" if len(rec.inputs.get("held_endpoints", ())) >= 2
              else "single",
              "pattern": kernel, "ranks": ranks, "seed": PREDICTION_SEEDS[0],
              "max_cycles": 2_000_000, "message_packets": max(1, volume)}
    if kernel == "uniform":
        config.update(rate=1.0, packets_per_task=64)
    return config


def predict_work(prediction: PolicyPrediction, reporter: RunReporter) -> dict:
    """Simulate the job's pattern on this policy's candidate (the task's body)."""
    rec = prediction.recommendation
    candidate = next(c for c in rec.inputs["candidates"] if c["policy"] == prediction.policy)
    config = SimConfig.from_dict(prediction.parameters)
    endpoints = _candidate_endpoints(rec, candidate)[: config.ranks]
    partitions = [endpoints]
    if config.scenario == "background":
        partitions.append(np.asarray(rec.inputs["held_endpoints"], dtype=np.int64))
    reporter.log(f"simulating {config.pattern} on {prediction.policy} ({config.ranks} ranks, "
                 f"{len(rec.inputs.get('held_endpoints', ()))} busy endpoints as background, "
                 f"seeds {', '.join(map(str, PREDICTION_SEEDS))})")
    per_seed, cycles, completed = [], 0, True
    for i, seed in enumerate(PREDICTION_SEEDS):
        def progress(fraction: float, i: int = i) -> None:
            reporter.progress((i + fraction) / len(PREDICTION_SEEDS))

        result = simulate(dataclasses.replace(config, seed=seed), partitions,
                          progress=progress)
        per_seed.append(result.apps[0].completion_cycles)
        cycles = max(cycles, result.cycles)
        completed = completed and bool(result.completed)
    mean = round(sum(per_seed) / len(per_seed)) if completed else None
    return {"completion_cycles": mean, "per_seed": per_seed, "cycles": cycles,
            "completed": completed}


def _candidate_endpoints(rec: Recommendation, candidate: dict) -> np.ndarray:
    return np.asarray(candidate["endpoints"], dtype=np.int64)


def run_prediction(prediction_id: int) -> str | None:
    """The task's one call: run the prediction once, then rank if all are in."""
    status = execute(PolicyPrediction, prediction_id, predict_work)
    prediction = PolicyPrediction.objects.filter(pk=prediction_id).first()
    if prediction is not None:
        finish_if_complete(prediction)
    return status


def finish_if_complete(prediction: PolicyPrediction) -> None:
    """After a prediction: when every prediction has ended, rank by simulation."""
    with transaction.atomic():
        rec = Recommendation.objects.select_for_update().get(pk=prediction.recommendation_id)
        if rec.status != RecommendationStatus.COMPUTING:
            return
        predictions = list(rec.predictions.all())
        if any(p.status not in TERMINAL_RUN_STATUSES for p in predictions):
            return
        _finalize_with_predictions(rec, predictions)


def _finalize_with_predictions(rec: Recommendation, predictions: list) -> None:
    analytic = analytic_factors(rec.inputs["candidates"], rec.inputs.get("held_fraction", 0))
    cycles = {p.policy: p.result["completion_cycles"] for p in predictions
              if p.status == RunStatus.SUCCEEDED and p.result and p.result.get("completed")}
    if not cycles:
        _store_ranking(rec, analytic, RecommendationMethod.ANALYTIC, final=True,
                       note="every simulation failed; ranked by the analytic score")
        return
    reference = cycles.get(rec.inputs["default_policy"]) or min(cycles.values())
    factors = {p: cycles[p] / reference if p in cycles else analytic[p] for p in analytic}
    missing = sorted(set(analytic) - set(cycles))
    note = (f"no simulation result for {', '.join(missing)}: analytic score used there"
            if missing else "")
    _store_ranking(rec, factors, RecommendationMethod.SIMULATION, final=True, cycles=cycles,
                   note=note)


def prediction_progress(rec: Recommendation) -> dict[str, int]:
    """How many of the recommendation's simulations exist and how many have ended."""
    statuses = list(rec.predictions.values_list("status", flat=True))
    return {"simulations": len(statuses),
            "done": sum(s in TERMINAL_RUN_STATUSES for s in statuses)}


def refresh(rec: Recommendation) -> Recommendation:
    """Past the deadline, a recommendation still computing is answered analytically."""
    if rec.status != RecommendationStatus.COMPUTING or timezone.now() < rec.deadline:
        return rec
    with transaction.atomic():
        rec = Recommendation.objects.select_for_update().get(pk=rec.pk)
        if rec.status == RecommendationStatus.COMPUTING:
            analytic = analytic_factors(rec.inputs["candidates"],
                                        rec.inputs.get("held_fraction", 0))
            _store_ranking(rec, analytic, RecommendationMethod.ANALYTIC, final=True,
                           note=f"simulations did not finish within {DEADLINE_SECONDS} s; "
                                "ranked by the analytic score")
    return rec


def expire_overdue() -> int:
    """Beat task body: answer every overdue recommendation analytically."""
    overdue = Recommendation.objects.filter(status=RecommendationStatus.COMPUTING,
                                            deadline__lt=timezone.now())
    count = 0
    for rec in overdue:
        refresh(rec)
        count += 1
    return count


# ------------------------------------------------------------------ accept
def accept(rec: Recommendation, user, policy: str | None = None) -> Job:
    """Allocate the recommended (or chosen) policy with N_node + N_spare nodes, once."""
    with transaction.atomic():
        rec = Recommendation.objects.select_for_update().get(pk=rec.pk)
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
        job = jobs.submit_job(owner=user, machine=rec.machine, name=rec.name,
                              external_id=rec.external_id, node_count=rec.node_count,
                              pattern=rec.pattern, t_cmpt=rec.inputs["t_cmpt"],
                              t_comm=entry["t_comm"] or None, policy=policy,
                              spares=entry["n_spare"])
        rec.status = RecommendationStatus.ACCEPTED
        rec.job = job
        rec.accepted_at = timezone.now()
        rec.save(update_fields=["status", "job", "accepted_at"])
        return job
