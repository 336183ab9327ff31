"""The reproduction report: the engine's normalised results next to a study's published
numbers (pure: no Django, no I/O).

The input is a list of *run records*, one per simulation run::

    {"point": {"part": "table4", "policy": "row", "pattern": "all2all", "ranks": 64,
               "replicas": 1, "seed": 0, ...},
     "status": "succeeded", "completion_cycles": 51234, "makespan_cycles": 51234,
     "run": 17, "error": ""}

``point["part"]`` says which experiment a run belongs to (see
:mod:`simulation.reproduction_preset`):

* ``table4``: interference, Omni-WAR, the five kernels. A run is judged by its
  target's completion (``completion_cycles``, else ``target_cycles``, else
  ``makespan_cycles``); the figure of a policy is the mean over the kernels of
  ``T_diagonal / T_policy`` (higher is better; diagonal is 1), runs paired by
  kernel, ranks and seed.
* ``escalation_min``: escalation with MIN routing and finite open-loop
  traffic, judged by the makespan; ``interference_static``: interference
  with finite open-loop targets, judged by the target's completion. Both are
  normalised the other way round, ``T_policy / T_diagonal`` (relative
  makespan, lower is better), paired by pattern, replicas and seed, and
  averaged over every pair.

The published side (``published``) is the parsed ``simulation/study_published.json``.
Every check is three-valued: ``True``, ``False`` or ``None`` when runs it needs
are missing, failed or unfinished. Such runs are listed under ``missing``; they
are never dropped silently.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from statistics import fmean
from typing import Any

from allocation.hyperx.policies import BASELINE_POLICY
from simulation.reproduction_noise import FAILS, OPEN, mean_interval, statement_noise

__all__ = [
    "ESCALATION",
    "INTERFERENCE",
    "PARTS",
    "TABLE4",
    "aggregate",
    "all_of",
    "check_statement",
    "index_runs",
    "mean_interval",
    "run_time",
]

TABLE4 = "table4"
ESCALATION = "escalation_min"
INTERFERENCE = "interference_static"
PARTS = (TABLE4, ESCALATION, INTERFERENCE)
SUCCEEDED = "succeeded"
#: Slack for comparisons of decimals (0.9 - 0.8 is 0.09999999999999998).
EPS = 1e-9

Key = tuple[str, str, str, int, int, int]  # part, policy, pattern, ranks, replicas, seed
Combo = tuple[str, int, int, int]  # pattern, ranks, replicas, seed


# --------------------------------------------------------------------------
# Small helpers


def run_time(record: Mapping[str, Any], part: str) -> float | None:
    """The time (cycles) a run is judged by, or ``None`` when it has none.

    Escalation runs are judged by their makespan; interference runs by their
    target's completion.

    Examples
    --------
    >>> run_time({"makespan_cycles": 900, "completion_cycles": 800}, "table4")
    800.0
    >>> run_time({"makespan_cycles": 900, "completion_cycles": 800}, "escalation_min")
    900.0
    >>> run_time({"makespan_cycles": None}, "escalation_min") is None
    True
    """
    keys = ("makespan_cycles",) if part == ESCALATION else (
        "completion_cycles", "target_cycles", "makespan_cycles")
    for key in keys:
        value = record.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) \
                and math.isfinite(value) and value > 0:
            return float(value)
    return None


def all_of(values: Iterable[bool | None]) -> bool | None:
    """Three-valued "and": ``False`` if any is false, else ``None`` if any is unknown.

    Examples
    --------
    >>> all_of([True, None]), all_of([True, None, False]), all_of([True, True])
    (None, False, True)
    """
    values = list(values)
    if any(v is False for v in values):
        return False
    if any(v is None for v in values):
        return None
    return True


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def check_statement(check: Mapping[str, Any], values: Mapping[str, float | None],
                    lower_is_better: bool = True) -> tuple[bool | None, str]:
    """Whether an ordering statement holds for per-policy values, and why.

    Parameters
    ----------
    check : mapping
        ``{"kind": "worst" | "best", "policies": [...]}``: the listed policies
        are the ``len(policies)`` worst (best), ties allowed;
        ``{"kind": "worse_than", "worse": [...], "better": [...]}``: each of
        ``worse`` is strictly worse than each of ``better``;
        ``{"kind": "close", "policies": [...], "tolerance": t}``: the listed
        values span at most ``t``.
    values : mapping
        Policy -> value (``None`` when missing). ``worst`` and ``best`` need
        every policy of ``values``; the other kinds only the listed ones.
    lower_is_better : bool
        Direction of the values (relative makespan: lower is better).

    Returns
    -------
    (bool or None, str)
        ``None`` when a value the statement needs is missing.

    Examples
    --------
    >>> values = {"diagonal": 1.0, "row": 1.2, "rectangular": 1.5}
    >>> check_statement({"kind": "worst", "policies": ["rectangular"]}, values)
    (True, 'worst: rectangular 1.500; the others at most 1.200 (row)')
    >>> check_statement({"kind": "best", "policies": ["row"]}, values)[0]
    False
    >>> check_statement({"kind": "worse_than", "worse": ["row"], "better": ["diagonal"]},
    ...                 values)[0]
    True
    >>> check_statement({"kind": "close", "policies": ["diagonal", "row"], "tolerance": 0.05},
    ...                 values)
    (False, 'spread 0.200 (1.000 to 1.200), tolerance 0.050')
    >>> check_statement({"kind": "best", "policies": ["row"]}, {**values, "diagonal": None})
    (None, 'no value yet for diagonal')
    """
    kind = check["kind"]
    if kind in ("worst", "best"):
        needed = list(values)
    elif kind == "worse_than":
        needed = [*check["worse"], *check["better"]]
    elif kind == "close":
        needed = list(check["policies"])
    else:
        raise ValueError(f"unknown ordering check {kind!r}")
    absent = [p for p in needed if values.get(p) is None]
    if absent:
        return None, f"no value yet for {', '.join(absent)}"
    sign = 1.0 if lower_is_better else -1.0
    bad = {p: sign * float(values[p]) for p in needed}  # larger is worse

    if kind == "close":
        vals = [float(values[p]) for p in needed]
        spread = max(vals) - min(vals)
        tol = float(check["tolerance"])
        return spread <= tol + EPS, (f"spread {spread:.3f} ({min(vals):.3f} to {max(vals):.3f}), "
                                     f"tolerance {tol:.3f}")
    if kind == "worse_than":
        worse, better = list(check["worse"]), list(check["better"])
        least_bad = min(worse, key=lambda p: bad[p])
        most_bad = max(better, key=lambda p: bad[p])
        holds = bad[least_bad] > bad[most_bad] + EPS
        return holds, (f"best of the first group {least_bad} {_fmt(values[least_bad])}; "
                       f"worst of the second {most_bad} {_fmt(values[most_bad])}")
    listed = list(check["policies"])
    others = [p for p in needed if p not in listed]
    word = "worst" if kind == "worst" else "best"
    if kind == "best":
        bad = {p: -b for p, b in bad.items()}  # larger is better now
    shown = ", ".join(f"{p} {_fmt(values[p])}" for p in listed)
    if not others:
        return True, f"{word}: {shown}"
    weakest = min(listed, key=lambda p: bad[p])
    nearest = max(others, key=lambda p: bad[p])
    holds = bad[weakest] >= bad[nearest] - EPS
    bound = "at most" if (kind == "worst") == lower_is_better else "at least"
    return holds, (f"{word}: {shown}; the others {bound} {_fmt(values[nearest])} ({nearest})")


# --------------------------------------------------------------------------
# Indexing the runs


def _int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _key(point: Mapping[str, Any]) -> Key:
    return (str(point.get("part")), str(point.get("policy")), str(point.get("pattern")),
            _int(point.get("ranks"), 0), _int(point.get("replicas", 1), 1),
            _int(point.get("seed", 0), 0))


def _reason(record: Mapping[str, Any]) -> tuple[str, str]:
    status = str(record.get("status") or "unknown")
    if status == SUCCEEDED:
        return "unfinished", "succeeded but did not finish within max_cycles"
    if status == "pending":
        return status, "not started yet"
    if status == "running":
        return status, "running"
    if status == "failed":
        error = str(record.get("error") or "").strip()
        return status, f"failed: {error}" if error else "failed"
    if status == "cancelled":
        return status, "cancelled"
    return status, status


def index_runs(records: Iterable[Mapping[str, Any]],
               expected: Iterable[Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Usable times per point, the points without one, and what was seen per part.

    Returns
    -------
    dict
        ``times``: key -> mean time of the succeeded, finished runs of the key
        (``(part, policy, pattern, ranks, replicas, seed)``); ``missing``: one
        entry per key with no time (``point``, ``status``, ``reason``, ``run``),
        including expected points with no run at all; ``combos``: part -> set of
        ``(pattern, ranks, replicas, seed)`` seen; ``counts``: records per
        status, plus ``ignored`` (records of no known part).

    Examples
    --------
    >>> recs = [{"point": {"part": "table4", "policy": "row", "pattern": "all2all",
    ...                    "ranks": 64, "seed": 0}, "status": "succeeded",
    ...          "completion_cycles": 100},
    ...         {"point": {"part": "table4", "policy": "diagonal", "pattern": "all2all",
    ...                    "ranks": 64, "seed": 0}, "status": "failed", "error": "timeout"}]
    >>> idx = index_runs(recs)
    >>> idx["times"]
    {('table4', 'row', 'all2all', 64, 1, 0): 100.0}
    >>> [m["reason"] for m in idx["missing"]]
    ['failed: timeout']
    """
    found: dict[Key, list[float]] = {}
    problems: dict[Key, dict[str, Any]] = {}
    combos: dict[str, set[Combo]] = {part: set() for part in PARTS}
    counts: dict[str, int] = {"ignored": 0}
    for record in records:
        point = record.get("point") or {}
        status = str(record.get("status") or "unknown")
        counts[status] = counts.get(status, 0) + 1
        if point.get("part") not in PARTS:
            counts["ignored"] += 1
            continue
        key = _key(point)
        combos[key[0]].add(key[2:])
        value = run_time(record, key[0]) if status == SUCCEEDED else None
        if value is not None:
            found.setdefault(key, []).append(value)
        elif key not in problems:
            state, reason = _reason(record)
            problems[key] = {"point": _point(key), "status": state, "reason": reason,
                             "run": record.get("run")}
    for point in expected or ():
        if point.get("part") not in PARTS:
            continue
        key = _key(point)
        combos[key[0]].add(key[2:])
        if key not in found and key not in problems:
            problems[key] = {"point": _point(key), "status": "absent",
                             "reason": "no run in the sweep", "run": None}
    missing = [problems[k] for k in sorted(problems) if k not in found]
    times = {k: fmean(v) for k, v in found.items()}
    return {"times": times, "missing": missing, "combos": combos, "counts": counts}


def _point(key: Key) -> dict[str, Any]:
    part, policy, pattern, ranks, replicas, seed = key
    return {"part": part, "policy": policy, "pattern": pattern, "ranks": ranks,
            "replicas": replicas, "seed": seed}


# --------------------------------------------------------------------------
# Table 4


def _table4_row(times: Mapping[Key, float], policy: str, baseline: str, ranks: int,
                kernels: Sequence[str], seeds: Sequence[int], published: float | None,
                tolerance: float) -> dict[str, Any]:
    per_kernel = []
    per_seed: dict[int, list[float]] = {s: [] for s in seeds}
    missing_pairs = []
    for kernel in kernels:
        ratios = []
        for seed in seeds:
            t_base = times.get((TABLE4, baseline, kernel, ranks, 1, seed))
            t_pol = times.get((TABLE4, policy, kernel, ranks, 1, seed))
            if t_base is None or t_pol is None:
                missing_pairs.append({"pattern": kernel, "seed": seed})
                continue
            ratios.append(t_base / t_pol)
            per_seed[seed].append(t_base / t_pol)
        per_kernel.append({"pattern": kernel, "mean": fmean(ratios) if ratios else None,
                           "n": len(ratios)})
    means = [k["mean"] for k in per_kernel]
    engine = fmean(means) if means and all(m is not None for m in means) else None
    complete = [s for s in seeds if len(per_seed[s]) == len(kernels)]
    interval = mean_interval([fmean(per_seed[s]) for s in complete])
    difference = engine - published if engine is not None and published is not None else None
    within = None if difference is None else abs(difference) <= tolerance + EPS
    return {"policy": policy, "published": published, "engine": engine,
            "interval": interval, "difference": difference, "within": within,
            "kernels": per_kernel, "seeds": len(complete), "missing_pairs": missing_pairs}


def _ranks_of(table: Mapping[str, Any]) -> list[int]:
    return sorted(int(r) for r in table["values"])


def _rank(rows: list[dict[str, Any]], field: str) -> None:
    known = sorted((r for r in rows if r[field] is not None), key=lambda r: -r[field])
    for row in rows:
        row[f"{field}_rank"] = None
    for i, row in enumerate(known, start=1):
        row[f"{field}_rank"] = i


def _table4(times: Mapping[Key, float], combos: set[Combo], published: Mapping[str, Any],
            tolerance: float) -> dict[str, Any]:
    table = published["table4"]
    kernels = list(table["kernels"])
    baseline = published.get("baseline", BASELINE_POLICY)
    policies = list(published["policies"])
    out = []
    for ranks in _ranks_of(table):
        seeds = sorted({c[3] for c in combos if c[1] == ranks})
        values = table["values"][str(ranks)]
        rows = [_table4_row(times, p, baseline, ranks, kernels, seeds, values.get(p), tolerance)
                for p in policies]
        _rank(rows, "engine")
        _rank(rows, "published")
        ranking = [r["policy"] for r in sorted((r for r in rows if r["engine"] is not None),
                                               key=lambda r: -r["engine"])]
        out.append({"ranks": ranks, "seeds": seeds, "rows": rows, "ranking": ranking,
                    "published_ranking": [r["policy"] for r in sorted(
                        (r for r in rows if r["published"] is not None),
                        key=lambda r: -r["published"])]})
    return {"kernels": kernels, "baseline": baseline, "tolerance": tolerance,
            "description": table.get("description", ""), "source": table.get("source", ""),
            "ranks": out}


# --------------------------------------------------------------------------
# Orderings


def _relative(times: Mapping[Key, float], part: str, combos: set[Combo],
              policies: Sequence[str], baseline: str) -> list[dict[str, Any]]:
    """Per policy: mean of ``T_policy / T_baseline`` over every paired combo, and per
    seed whose pairs are all there (``by_seed``, with their ``interval``)."""
    patterns = sorted({c[0] for c in combos})
    per_seed_expected: dict[int, int] = {}
    for combo in combos:
        per_seed_expected[combo[3]] = per_seed_expected.get(combo[3], 0) + 1
    rows = []
    for policy in policies:
        ratios: dict[str, list[float]] = {p: [] for p in patterns}
        seed_ratios: dict[int, list[float]] = {}
        for pattern, ranks, replicas, seed in sorted(combos):
            t_base = times.get((part, baseline, pattern, ranks, replicas, seed))
            t_pol = times.get((part, policy, pattern, ranks, replicas, seed))
            if t_base is not None and t_pol is not None:
                ratios[pattern].append(t_pol / t_base)
                seed_ratios.setdefault(seed, []).append(t_pol / t_base)
        pooled = [r for p in patterns for r in ratios[p]]
        by_seed = {s: fmean(v) for s, v in sorted(seed_ratios.items())
                   if len(v) == per_seed_expected[s]}
        rows.append({"policy": policy, "mean": fmean(pooled) if pooled else None,
                     "n": len(pooled), "expected": len(combos), "by_seed": by_seed,
                     "interval": mean_interval(list(by_seed.values())),
                     "by_pattern": [{"pattern": p, "mean": fmean(ratios[p]) if ratios[p]
                                     else None, "n": len(ratios[p])} for p in patterns]})
    return rows


def _orderings(times: Mapping[Key, float], combos: Mapping[str, set[Combo]],
               published: Mapping[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    policies = list(published["policies"])
    baseline = published.get("baseline", BASELINE_POLICY)
    descriptions = published.get("ordering_parts", {})
    parts = {}
    for part in (ESCALATION, INTERFERENCE):
        info = descriptions.get(part, {})
        parts[part] = {"description": info.get("description", ""),
                       "metric": info.get("metric", ""), "lower_is_better": True,
                       "patterns": sorted({c[0] for c in combos[part]}),
                       "replicas": sorted({c[2] for c in combos[part]}),
                       "seeds": sorted({c[3] for c in combos[part]}),
                       "rows": _relative(times, part, combos[part], policies, baseline)}
    checks = []
    for statement in published.get("orderings", []):
        part = statement["part"]
        rows = parts[part]["rows"]
        values = {r["policy"]: r["mean"] for r in rows}
        holds, detail = check_statement(statement["check"], values, lower_is_better=True)
        involved = _involved(statement["check"], policies)
        noise = (statement_noise(statement["check"], {r["policy"]: r["by_seed"] for r in rows})
                 if holds is not None else None)
        checks.append({"id": statement["id"], "part": part, "text": statement["text"],
                       "source": statement.get("source", ""), "kind": statement["check"]["kind"],
                       "holds": holds, "detail": detail, "noise": noise,
                       "noise_detail": _noise_detail(holds, noise),
                       "values": [{"policy": p, "value": values.get(p)} for p in involved],
                       "by_pattern": _by_pattern(statement["check"], rows,
                                                 parts[part]["patterns"])})
    return parts, checks


def _noise_detail(holds: bool | None, noise: Mapping[str, Any] | None) -> str:
    """One sentence on whether more seeds could turn the verdict."""
    if holds is None:
        return ""
    if noise is None:
        return "fewer than two seeds: no interval, more seeds could turn this verdict"
    closest = noise["closest"]
    pair = (f"{closest['a']} - {closest['b']} {closest['mean']:+.3f} "
            f"± {closest['half_width']:.3f}")
    bound = "" if closest["bound"] is None else f" (bound {closest['bound']:+.3f})"
    seeds = f"{noise['seeds']} seeds"
    if noise["verdict"] == OPEN:
        return f"within the seeds' noise ({seeds}): {pair}{bound} straddles its bound"
    if noise["verdict"] == FAILS:
        return f"fails beyond the seeds' noise ({seeds}): {pair}{bound}"
    return f"holds beyond the seeds' noise ({seeds}); closest: {pair}{bound}"


def _by_pattern(check: Mapping[str, Any], rows: list[dict[str, Any]],
                patterns: Sequence[str]) -> list[dict[str, Any]]:
    """The statement checked on each traffic pattern of its part alone: the pooled
    verdict can hide that one pattern decides it (docs/domain.md 6.9)."""
    out = []
    for i, pattern in enumerate(patterns):
        values = {r["policy"]: r["by_pattern"][i]["mean"] for r in rows}
        holds, detail = check_statement(check, values, lower_is_better=True)
        out.append({"pattern": pattern, "holds": holds, "detail": detail})
    return out


def _involved(check: Mapping[str, Any], policies: Sequence[str]) -> list[str]:
    if check["kind"] in ("worst", "best"):
        return list(policies)
    if check["kind"] == "worse_than":
        return [*check["worse"], *check["better"]]
    return list(check["policies"])


# --------------------------------------------------------------------------
# Targets and the headline


def _targets(table4: Mapping[str, Any], published: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = []
    for target in published.get("targets", []):
        kind = target["kind"]
        per_ranks = []
        for block in table4["ranks"]:
            rows = {r["policy"]: r for r in block["rows"]}
            if kind == "within":
                bad = [f"{r['policy']} off by {abs(r['difference']):.3f}"
                       for r in block["rows"] if r["within"] is False]
                holds = all_of(r["within"] for r in block["rows"])
                detail = ("; ".join(bad) if bad else
                          f"{sum(r['within'] is True for r in block['rows'])} of "
                          f"{len(block['rows'])} within")
            elif kind == "at_most":
                limit = float(target["value"])
                values = [(p, rows[p]["engine"]) for p in target["policies"] if p in rows]
                holds = all_of(None if v is None else v <= limit + EPS for _, v in values)
                detail = ", ".join(f"{p} {_fmt(v)}" for p, v in values)
            elif kind == "near_best":
                policy, tol = target["policy"], float(target["tolerance"])
                values = {p: r["engine"] for p, r in rows.items()}
                if any(v is None for v in values.values()):
                    holds, detail = None, "not every policy has a value yet"
                else:
                    best = max(values, key=lambda p: values[p])
                    holds = values[policy] >= values[best] - tol - EPS
                    detail = f"best {best} {values[best]:.3f}; {policy} {values[policy]:.3f}"
            else:
                raise ValueError(f"unknown target kind {kind!r}")
            per_ranks.append({"ranks": block["ranks"], "holds": holds, "detail": detail})
        out.append({"id": target["id"], "text": target["text"], "kind": kind,
                    "holds": all_of(x["holds"] for x in per_ranks), "per_ranks": per_ranks})
    return out


def _agreement(table4: Mapping[str, Any], orderings: list[dict[str, Any]]) -> dict[str, Any]:
    baseline = table4["baseline"]
    values = [r["within"] for block in table4["ranks"] for r in block["rows"]
              if r["policy"] != baseline]
    checks = [c["holds"] for c in orderings]
    t4_agree, ord_agree = sum(v is True for v in values), sum(v is True for v in checks)
    agree, total = t4_agree + ord_agree, len(values) + len(checks)
    unknown = sum(v is None for v in values) + sum(v is None for v in checks)
    if unknown == total:
        sentence = ("No published figure can be checked yet: the reproduction runs have not "
                    "finished.")
    elif unknown:
        # Partial results: count only what can be judged, never "2 of 17" for 2 of 3.
        t4_checked = sum(v is not None for v in values)
        ord_checked = sum(v is not None for v in checks)
        sentence = (f"So far the model agrees with {agree} of the {total - unknown} published "
                    f"figures that can be checked ({t4_agree} of {t4_checked} Table 4 values "
                    f"within {table4['tolerance']:.2f}, {ord_agree} of {ord_checked} "
                    f"orderings); the other {unknown} of {total} wait for runs that are "
                    "missing, failed or unfinished.")
    else:
        sentence = (f"The model agrees with {agree} of {total} published figures "
                    f"({t4_agree} of {len(values)} Table 4 values within "
                    f"{table4['tolerance']:.2f}, {ord_agree} of {len(checks)} orderings).")
    judged = [c for c in orderings if c["holds"] is not None]
    unsettled = [c["id"] for c in judged if c["noise"] is None
                 or c["noise"]["verdict"] == OPEN]
    if judged and all(c["noise"] is None for c in judged):
        sentence += (" The orderings have fewer than two seeds to compare: nothing says "
                     "whether more seeds would turn them.")
    elif len(unsettled) == 1:
        sentence += (f" The verdict of {unsettled[0]} lies within the seeds' noise: more "
                     "seeds could turn it.")
    elif unsettled:
        names = ", ".join(unsettled[:-1]) + " and " + unsettled[-1]
        sentence += (f" The verdicts of {names} lie within the seeds' noise: more seeds "
                     "could turn them.")
    return {"agree": agree, "total": total, "unknown": unknown,
            "table4": {"agree": t4_agree, "total": len(values)},
            "orderings": {"agree": ord_agree, "total": len(checks)},
            "unsettled": unsettled, "sentence": sentence}


def aggregate(records: Iterable[Mapping[str, Any]], published: Mapping[str, Any],
              expected: Iterable[Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """The reproduction report of a set of runs against the published figures.

    Parameters
    ----------
    records : iterable of mapping
        Run records (module docstring).
    published : mapping
        The parsed ``study_published.json``.
    expected : iterable of mapping, optional
        Every point the runs should cover (the preset's); a point with no record
        is reported missing.

    Returns
    -------
    dict
        ``agreement`` (the headline sentence and counts), ``table4`` (per ranks:
        one row per policy with ``published``, ``engine``, ``interval``,
        ``difference``, ``within``, per-kernel means, ranks and the ranking),
        ``parts`` (per ordering experiment: relative values per policy),
        ``orderings`` (each statement with ``holds`` and the values),
        ``targets``, ``missing`` and ``counts``.

    Examples
    --------
    >>> pub = {"policies": ["diagonal", "row"], "baseline": "diagonal",
    ...        "table4": {"kernels": ["all2all"], "values": {"64": {"diagonal": 1.0,
    ...                                                               "row": 0.7}}},
    ...        "targets": [{"id": "w", "kind": "within", "tolerance": 0.1, "text": "w"}]}
    >>> def rec(policy, seed, cycles):
    ...     point = {"part": "table4", "policy": policy, "pattern": "all2all",
    ...              "ranks": 64, "seed": seed}
    ...     return {"point": point, "status": "succeeded", "completion_cycles": cycles}
    >>> recs = [rec("diagonal", 0, 100), rec("row", 0, 125),
    ...         rec("diagonal", 1, 100), rec("row", 1, 160)]
    >>> rep = aggregate(recs, pub)
    >>> row = rep["table4"]["ranks"][0]["rows"][1]
    >>> round(row["engine"], 4), round(row["difference"], 4), row["within"]
    (0.7125, 0.0125, True)
    >>> rep["agreement"]["sentence"]
    'The model agrees with 1 of 1 published figures (1 of 1 Table 4 values within 0.10, \
0 of 0 orderings).'
    """
    records = list(records)
    idx = index_runs(records, expected)
    tolerance = next((float(t["tolerance"]) for t in published.get("targets", [])
                      if t["kind"] == "within"), 0.10)
    table4 = _table4(idx["times"], idx["combos"][TABLE4], published, tolerance)
    parts, orderings = _orderings(idx["times"], idx["combos"], published)
    return {"source": dict(published.get("source", {})),
            "agreement": _agreement(table4, orderings),
            "table4": table4, "parts": parts, "orderings": orderings,
            "targets": _targets(table4, published),
            "missing": idx["missing"], "counts": idx["counts"]}
