"""Ranking the candidates: the analytic factor, the spare model per policy, the
study's refusal rules, and the recommended entry with its batch lines."""

from __future__ import annotations

import math

from django.core.exceptions import ValidationError
from django.utils import timezone

from allocation.services import jobs
from health import services as health
from hxportal import hostlists
from recommendations import constants
from recommendations.models import Recommendation, RecommendationStatus


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
            base *= 1 + constants.LOCALITY_PENALTY * held_fraction
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


def store_ranking(rec: Recommendation, factors: dict[str, float], method: str,
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
    if final:
        for sharer in rec.sharers.select_for_update().filter(
                status=RecommendationStatus.COMPUTING):
            share_outcome(rec, sharer)


def share_outcome(source: Recommendation, rec: Recommendation) -> None:
    """Give ``rec`` the finished ranking of ``source`` (the same question on the same
    occupancy): the computation only, with ``rec``'s own id in its batch lines."""
    rec.ranking = source.ranking
    rec.recommended = {**source.recommended,
                       "sbatch": sbatch_lines(rec, source.recommended)}
    rec.method = source.method
    rec.note = source.note
    rec.status = RecommendationStatus.READY
    rec.finished_at = timezone.now()
    rec.save(update_fields=["ranking", "recommended", "method", "note", "status",
                            "finished_at"])


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
        if held_fraction >= constants.LOCALITY_LOAD:
            why.append(f"loses switch locality with {held_fraction:.0%} of the machine held "
                       "by other jobs (their traffic interferes and blocks it at shared "
                       "switches)")
        if entry.get("broken_switches"):
            why.append(f"breaks {entry['broken_switches']} whole free switches that later "
                       "jobs could use whole")
        if not why:
            continue
        # each cost the simulation cannot see must be paid by a clear simulated gain
        needed = constants.CLEAR_WIN * len(why)
        gain = 1 - entry["relative_comm"] / best_local["relative_comm"]
        if simulated and gain >= needed:
            entry["reason"] += (f"; kept although it {' and '.join(why)}: simulated "
                                f"{gain:.0%} faster than {best_local['policy']}")
            continue
        shown = (f"only {gain:.0%} faster than" if gain > 0 else
                 "not faster than") if simulated else "no simulation yet against"
        entry["refused"] = (f"{' and '.join(why)}; {shown} {best_local['policy']} "
                            f"(needs {needed:.0%}, {constants.CLEAR_WIN:.0%} for each)")
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
