"""Ranking the candidates: the analytic factor, the spare model per policy, the
study's refusal rules, and the recommended entry with its batch lines."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from django.core.exceptions import ValidationError
from django.utils import timezone

from allocation.services import jobs
from health import services as health
from hxportal import hostlists
from hxportal.text import join_words, pluralize
from recommendations import constants
from recommendations.models import Recommendation, RecommendationStatus
from recommendations.services.seeds import Difference, SeedScale, describe_difference


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


def _spares(rec: Recommendation, t_comm: float, estimate) -> dict | None:
    inputs = rec.inputs
    try:
        out = health.recommend(n_node=rec.node_count, t_cmpt=inputs["t_cmpt"], t_comm=t_comm,
                               machine=rec.machine, p_abn=inputs["p_abn"],
                               alpha_abn=inputs["alpha_abn"], t_bench=inputs["t_bench"],
                               max_curve_points=200, estimate=estimate)
    except ValidationError as exc:
        return {"error": "; ".join(exc.messages)}
    return out


def _percent(fraction: float) -> str:
    return f"{abs(fraction) * 100:.0f} %"


def _placement(props: dict, nodes: int) -> str:
    """Where the nodes are, in words: whole switches or shared ones, and the bandwidth.

    >>> _placement({"switches": 8, "switch_locality": True, "pb_exact": 2.0}, 64)
    'Its 64 nodes fill 8 whole switches, so it shares no switch with another job; \
partition bandwidth 2.00.'
    >>> _placement({"switches": 1, "switch_locality": True, "pb_exact": None,
    ...             "pb_bound": None}, 8)
    'Its 8 nodes fill 1 whole switch, so it shares no switch with another job and \
uses no network link.'
    """
    switches = pluralize(props["switches"], "switch")
    if props["switch_locality"]:
        where = (f"Its {pluralize(nodes, 'node')} fill {props['switches']:,} whole "
                 f"{'switch' if props['switches'] == 1 else 'switches'}, so it shares no "
                 "switch with another job")
    else:
        where = (f"Its {pluralize(nodes, 'node')} are spread over {switches} that other "
                 "jobs can share, so their traffic can slow it down there")
    pb = props.get("pb_exact") or props.get("pb_bound")
    if pb is None:
        return where + " and uses no network link."
    return f"{where}; partition bandwidth {pb:.2f}."


def _reason(entry: dict, default: str, pattern: str, nodes: int) -> str:
    """Why a candidate ranks where it does, as sentences an operator reads."""
    text = _placement(entry["properties"], nodes)
    if entry.get("predicted_cycles") and entry.get("source") == "calibrated":
        text += (f" From this machine shape's calibration, its {pattern} communication "
                 f"takes about {entry['predicted_cycles']:,} cycles")
    elif entry.get("predicted_cycles"):
        text += (f" Simulated on the machine as it is now, its {pattern} communication "
                 f"took {entry['predicted_cycles']:,} cycles")
    rel = entry["relative_comm"]
    if entry["policy"] != default and not math.isclose(rel, 1.0, rel_tol=0.005):
        text += (" and" if entry.get("predicted_cycles") else
                 " Its communication is expected to take")
        text += (f" {_percent(1 - rel)} {'less' if rel < 1 else 'more'} time than with "
                 f"{default}, the site's default")
    elif entry.get("predicted_cycles") and entry["policy"] != default:
        text += f", the same as {default}, the site's default"
    if entry.get("predicted_cycles") or (entry["policy"] != default
                                         and not math.isclose(rel, 1.0, rel_tol=0.005)):
        text += "."
    return text


def _with_spares(placed: dict, node_count: int, n_spare: int) -> str:
    """What the allocation looks like once the spare nodes are added (the job's nodes)."""
    if not n_spare or not placed:
        return ""
    total = node_count + n_spare
    if placed["switch_locality"]:
        return (f" With its {pluralize(n_spare, 'spare node')} the job gets {total:,} nodes, "
                f"which still fill whole switches ({pluralize(placed['switches'], 'switch')}).")
    return (f" With its {pluralize(n_spare, 'spare node')} the job gets {total:,} nodes, "
            f"which no longer fill whole switches: they are spread over "
            f"{pluralize(placed['switches'], 'switch')} that other jobs can share.")


def _spare_estimate(rec: Recommendation):
    """The estimate the recommendation was asked under (its cache key names it), read
    once per ranking; rows from before it was kept read the latest."""
    if "estimate_id" not in rec.inputs:
        return health.LATEST
    return health.estimate_of(rec.machine, rec.inputs["estimate_id"])


def _snapshot(rec: Recommendation) -> tuple[np.ndarray, np.ndarray]:
    """(available, busy) over endpoints as the recommendation was asked: its
    held and down endpoints (the occupancy is read once, by the request)."""
    available = np.ones(rec.machine.node_count, dtype=bool)
    busy = np.zeros_like(available)
    held = np.asarray(rec.inputs.get("held_endpoints", ()), dtype=np.int64)
    available[held] = False
    busy[held] = True
    available[np.asarray(rec.inputs.get("down_endpoints", ()), dtype=np.int64)] = False
    return available, busy


def _place_spares(rec: Recommendation, entries: list[dict], best: dict) -> dict:
    """Each entry's spares, chosen by its policy around its own primaries on the
    snapshot (``spares_hostlist``); the best one's full candidate (with properties)."""
    available, busy = _snapshot(rec)
    ranked = {c["policy"]: c for c in rec.inputs["candidates"]}
    placed = {}
    for entry in entries:
        c = ranked[entry["policy"]]
        around = jobs.propose_around(rec.machine, entry["policy"], c["endpoints"],
                                     entry["n_spare"], c.get("seed", 0), available, busy,
                                     properties=entry is best)
        entry["spares_hostlist"] = "" if around.error else hostlists.compress(
            around.hostnames[len(c["endpoints"]):])
        if entry is best:
            placed = {"hostnames": list(around.hostnames), "properties": around.properties}
    return placed


class SeedVerdict(NamedTuple):
    """What the live runs' seeds say: each simulated policy's cycles per seed, the
    fastest on their mean and the policies it cannot be told from, faster than it at
    some seeds (``seeds.seed_rivals``)."""

    cycles: dict[str, dict[int, int]]
    fastest: str | None
    rivals: dict[str, list[int]]
    #: Policies that ran extra seeds against the fastest: their paired difference.
    differences: dict[str, Difference]
    #: Policies run at fewer seeds than the contest: how their mean was weighed on its.
    scales: dict[str, SeedScale]


NO_SEEDS = SeedVerdict({}, None, {}, {}, {})


def _entry(rec: Recommendation, c: dict, factors: dict[str, float], default: str,
           cycles: dict[str, int], estimate, sources: dict[str, str],
           seeds: SeedVerdict) -> dict:
    """One candidate's ranking entry: its factor relative to ``default``, the spare
    model's answer at that communication time, and the reason in words."""
    if c["policy"] not in factors:
        return {"policy": c["policy"], "error": c["error"]}
    t_comm = rec.inputs["t_comm"]
    rel = factors[c["policy"]] / factors[default]
    spares = _spares(rec, t_comm * rel, estimate)
    entry = {"policy": c["policy"], "hostlist": c["hostlist"],
             "properties": c["properties"], "relative_comm": rel,
             "broken_switches": c.get("broken_switches", 0),
             "predicted_cycles": cycles.get(c["policy"]),
             "source": sources.get(c["policy"], "analytic"),
             "t_comm": t_comm * rel, "spares": spares}
    if entry["source"] == "calibrated":  # how far the calibration's seeds of it lay apart
        entry["seed_spread"] = (rec.inputs.get("calibrated_spread") or {}).get(c["policy"])
    if entry["source"] == "simulation" and c["policy"] in seeds.cycles:
        entry["seed_cycles"] = {str(s): n for s, n in sorted(seeds.cycles[c["policy"]].items())}
    if spares and "error" not in spares:
        entry.update(n_spare=spares["n_spare"], expected_cost=spares["expected_cost"],
                     expected_time=spares["expected_time"], as_is_cost=spares["as_is_cost"])
    else:
        entry.update(n_spare=0, expected_cost=rec.node_count * (
            rec.inputs["t_cmpt"] + t_comm * rel), expected_time=None, as_is_cost=None)
    entry["reason"] = _reason(entry, default, rec.pattern, rec.node_count)
    if c["policy"] == seeds.fastest and seeds.rivals:
        entry["reason"] += (f" The seeds cannot order it against {join_words(sorted(seeds.rivals))}"
                            f", faster than it at some seed.")
    if beat := seeds.rivals.get(c["policy"]):
        entry["faster_than_fastest_at_seeds"] = beat
        entry["reason"] += (f" At seed{'s' if len(beat) > 1 else ''} "
                            f"{', '.join(map(str, beat))} it was faster than {seeds.fastest}, "
                            "the fastest on the mean: the seeds cannot order the two.")
    if scale := seeds.scales.get(c["policy"]):
        entry["weighed_on_seeds"] = scale.as_dict()
        ran = sorted(seeds.cycles[c["policy"]])
        entry["reason"] += (f" It ran seed{'s' if len(ran) > 1 else ''} "
                            f"{', '.join(map(str, ran))} only: its time is weighed on seeds "
                            f"{', '.join(map(str, scale.seeds))} by how {scale.reference} "
                            f"fared on them (x{scale.scale:.3f}).")
    if difference := seeds.differences.get(c["policy"]):
        entry["versus_fastest"] = difference.as_dict()
        entry["reason"] += (" Run at more seeds to settle the fastest, its time was "
                            f"{describe_difference(difference, seeds.fastest)}.")
    close_call = rec.inputs.get("close_call") or []
    if entry["source"] == "simulation" and c["policy"] in close_call:
        entry["settled"] = True  # its factor is a calibrated time, placed by the live runs
        entry["reason"] += (" The calibration could not order it against "
                            f"{join_words([p for p in close_call if p != c['policy']])}: the live "
                            "runs did, and it keeps a place among their calibrated times.")
    return entry


def store_ranking(rec: Recommendation, factors: dict[str, float], method: str,
                  final: bool, cycles: dict[str, int] | None = None, note: str = "",
                  estimate=None, sources: dict[str, str] | None = None,
                  seeds: SeedVerdict = NO_SEEDS) -> None:
    """Rank the candidates with ``factors`` and store the answer (``final``: ready).

    Each entry says where its factor came from (``source``: ``simulation``,
    ``calibrated`` or ``analytic``): by default the method for the policies with
    ``cycles``, the analytic score for the others. A simulated entry lists its cycles
    per seed (``seed_cycles``), and one faster than the fastest at some seeds says so.

    Reads neither the live occupancy nor, more than once, the spare model: the
    recommended nodes are the best candidate's ranked primaries (its prediction
    simulated them) and the spares its policy chose around them on the snapshot.
    """
    estimate = _spare_estimate(rec) if estimate is None else estimate
    default = rec.inputs["default_policy"]
    if default not in factors:
        default = min(factors, key=factors.get)
    cycles = cycles or {}
    if sources is None:
        sources = dict.fromkeys(cycles, str(method))
    entries = [_entry(rec, c, factors, default, cycles, estimate, sources, seeds)
               for c in rec.inputs["candidates"]]
    feasible = [e for e in entries if "error" not in e]
    _refuse_spread(feasible, rec.inputs.get("held_fraction", 0.0), simulated=bool(cycles))
    ranked = sorted(feasible, key=lambda e: (bool(e.get("refused")), e["expected_cost"],
                                             e["relative_comm"], e["policy"]))
    best = ranked[0]
    default_entry = next(e for e in ranked if e["policy"] == default)
    placed = _place_spares(rec, feasible, best)
    nodes = placed.get("hostnames") or []
    # The job is allocated with its spares: what is said about switch locality must hold
    # for all of its nodes, not only for the candidate's N_node.
    properties = placed.get("properties") or best["properties"]
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
        "default_policy": default, "method": method,
        "reason": best["reason"] + _with_spares(placed.get("properties"), rec.node_count,
                                                best["n_spare"]),
        "properties": properties,
        "curve": (best["spares"] or {}).get("curve"),
    }
    passed_over = [e for e in ranked if e.get("refused")
                   and e["expected_cost"] < best["expected_cost"]]
    if passed_over:
        names = [e["policy"] for e in passed_over]
        recommended["reason"] += (
            f" Chosen over {join_words(names)}, which would cost less but "
            f"{'is' if len(names) == 1 else 'are'} not recommended: "
            f"{passed_over[0]['policy']} {passed_over[0]['refused']}.")
    recommended["sbatch"] = sbatch_lines(rec, recommended)
    rec.ranking = ranked + [e for e in entries if "error" in e]
    rec.recommended = recommended
    rec.method = method
    rec.note = note[:constants.NOTE_LENGTH]
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


def refused_policies(candidates: list[dict], held_fraction: float,
                     factors: dict[str, float]) -> set[str]:
    """The candidates (each with its ``properties`` and ``broken_switches``) that the
    study's rules refuse with these simulated factors, as :func:`store_ranking` will
    (its rule on the factors alone, without the spare model)."""
    entries = [{"policy": c["policy"], "properties": c["properties"], "reason": "",
                "relative_comm": factors[c["policy"]],
                "broken_switches": c.get("broken_switches", 0)}
               for c in candidates if c["policy"] in factors]
    _refuse_spread(entries, held_fraction, simulated=True)
    return {e["policy"] for e in entries if e.get("refused")}


def _refuse_spread(entries: list[dict], held_fraction: float, simulated: bool) -> None:
    """Mark candidates without switch locality that the study's lessons rule out.

    Only when some candidate keeps switch locality (a job smaller than a
    switch cannot). Sets ``refused`` (why, a clause after the policy's name) on the
    entry and says it in its reason.
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
            why.append(f"would share switches while other jobs hold {held_fraction:.0%} of "
                       "the machine (their traffic interferes with it at shared switches)")
        if entry.get("broken_switches"):
            why.append(f"would split {pluralize(entry['broken_switches'], 'whole free switch')}"
                       " that later jobs could use whole")
        if not why:
            continue
        # each cost the simulation cannot see must be paid by a clear simulated gain
        needed = constants.CLEAR_WIN * len(why)
        gain = 1 - entry["relative_comm"] / best_local["relative_comm"]
        other = best_local["policy"]
        if simulated and gain >= needed:
            measure = ("calibration" if entry.get("source") == "calibrated" or entry.get("settled")
                   else "simulation")
            entry["reason"] += (f" Recommended although it {join_words(why)}: the {measure} shows "
                                f"it {gain:.0%} faster than {other}, more than the "
                                f"{needed:.0%} that is worth.")
            continue
        measure = ("calibration" if entry.get("source") == "calibrated" or entry.get("settled")
                   else "simulation")
        shown = (f"the {measure} shows it only {gain:.0%} faster" if gain > 0 else
                 f"the {measure} shows it no faster") if simulated else \
            "no simulation has finished yet to show it faster"
        entry["refused"] = (f"{join_words(why)}; that is worth it only if it is at least "
                            f"{needed:.0%} faster than {other}, and {shown}")
        entry["reason"] += f" Not recommended: it {entry['refused']}."


def sbatch_lines(rec: Recommendation, recommended: dict) -> list[str]:
    """The lines a batch script needs to take the recommended nodes."""
    lines = [f"#SBATCH --nodes={recommended['n_total']}",
             f"#SBATCH --nodelist={recommended['nodelist']}",
             f"#SBATCH --comment=hxportal-recommendation={rec.pk}"]
    if recommended["n_spare"]:
        lines.append(f"# run the benchmark on all nodes, then: srun -N {rec.node_count} "
                     "-x <dropped> app   (hx_select_fastest prints <dropped>)")
    return lines
