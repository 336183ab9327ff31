"""The published orderings on more seeds than the reproduction sweep makes.

The reproduction sweep (``simulation/reproduction_preset.py``) runs the two ordering
parts, escalation with MIN routing and interference with Omni-WAR and static
targets, on its ordering seeds (at most 32, the stored reference's). Ordering a3 of
``simulation/study_published.json`` ("Diagonal, Random Endpoint and Full Spread are
close, within 0.05 of each other") sits within the noise of 32 seeds; this script
runs the same points on as many seeds as asked, so that one can see which way more
seeds turn it.

It runs the parts' points (``reproduction_preset.ordering_configs``) on seeds 0 ..
``--seeds`` - 1 through the engine, checks that the seeds it shares with the stored
reference give its cycles (the same runs, so they must), and prints per part each policy's
time relative to Diagonal (same pattern, replicas and seed; per seed the mean over
the part's patterns and replicas, then the mean over seeds with its two-sided 95 %
Student-t interval; lower is better), the same pooled by pattern, and each ordering's
verdict on all the seeds, as the reproduction report checks it
(``simulation.reproduction.aggregate``: on the means, and whether the seeds' paired
intervals decide it, ``simulation.reproduction_noise``).

Each run is cached on disk (``--cache``, JSON), so a rerun only reports.

Usage: .venv/bin/python benchmarks/ordering_seeds.py [--seeds 8] [--processes 2]
       [--parts escalation_min,interference_static] [--cache /tmp/hx_ordering_seeds.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from multiprocessing import Pool
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from simulation.engine import SimConfig, simulate  # noqa: E402
from simulation.engine.scenarios import build_partitions  # noqa: E402
from simulation.reproduction import aggregate, mean_interval, run_time  # noqa: E402
from simulation.reproduction_preset import ordering_configs  # noqa: E402

PUBLISHED = ROOT / "simulation" / "study_published.json"
REFERENCE = ROOT / "simulation" / "reproduction_reference.json"
BASELINE = "diagonal"
FIELDS = ("part", "policy", "pattern", "ranks", "replicas", "seed")


def point_key(point: dict) -> str:
    return "|".join(str(point[f]) for f in FIELDS)


def run_point(item: tuple[dict, dict]) -> tuple[str, dict]:
    """The run's record as the reproduction report reads it (its times in cycles)."""
    point, config = item
    cfg = SimConfig.from_dict(config)
    result = simulate(cfg, build_partitions(cfg))
    target = next((a for a in result.apps if a.role == "app"), None)
    return point_key(point), {
        "point": point, "status": "succeeded",
        "makespan_cycles": result.makespan_cycles,
        "completion_cycles": target.completion_cycles if target is not None else None}


def check_reference(cache: dict[str, dict]) -> tuple[int, list[str]]:
    """Runs this script shares with the stored reference, and those whose time differs."""
    reference = json.loads(REFERENCE.read_text(encoding="utf-8"))
    shared, differ = 0, []
    for record in reference["records"]:
        key = point_key({"replicas": 1, **record["point"]})
        if key not in cache:
            continue
        shared += 1
        part = record["point"]["part"]
        if run_time(record, part) != run_time(cache[key], part):
            differ.append(key)
    return shared, differ


def per_seed(records: list[dict], part: str, policy: str,
             pattern: str | None = None) -> list[float]:
    """Per seed: the mean of ``T_policy / T_diagonal`` over the part's combinations
    (of ``pattern`` only, when given)."""
    times = {(r["point"]["pattern"], r["point"]["replicas"], r["point"]["seed"],
              r["point"]["policy"]): run_time(r, part)
             for r in records if r["point"]["part"] == part}
    seeds = sorted({k[2] for k in times})
    out = []
    for seed in seeds:
        ratios = [times[(pat, rep, seed, policy)] / times[(pat, rep, seed, BASELINE)]
                  for pat, rep, s, pol in times
                  if s == seed and pol == policy and (pattern is None or pat == pattern)
                  and times.get((pat, rep, seed, BASELINE))]
        if ratios:
            out.append(statistics.fmean(ratios))
    return out


def _cell(values: list[float]) -> str:
    interval = mean_interval(values)
    mean = statistics.fmean(values)
    if interval is None or not interval.get("half_width"):
        return f"{mean:.3f}"
    return f"{mean:.3f} +- {interval['half_width']:.3f}"


def report(records: list[dict], parts: list[str], published: dict) -> None:
    rep = aggregate(records, published)
    for part in parts:
        info = rep["parts"][part]
        print(f"\n{part}: {info['description']}")
        print(f"seeds {info['seeds'][0]}-{info['seeds'][-1]} ({len(info['seeds'])}); "
              f"{info['metric']}; mean +- 95 % t half-width over the seeds")
        patterns = info["patterns"]
        print(f"  {'policy':<16} {'pooled':<16} " + " ".join(f"{p:<16}" for p in patterns))
        rows = []
        for policy in published["policies"]:
            pooled = per_seed(records, part, policy)
            cells = [_cell(per_seed(records, part, policy, p)) for p in patterns]
            rows.append((statistics.fmean(pooled), f"  {policy:<16} {_cell(pooled):<16} "
                         + " ".join(f"{c:<16}" for c in cells)))
        for _, line in sorted(rows):
            print(line)
        for check in rep["orderings"]:
            if check["part"] != part:
                continue
            verdict = {True: "holds", False: "fails", None: "cannot be checked"}[check["holds"]]
            by_pattern = "; ".join(
                f"{b['pattern']} alone {'holds' if b['holds'] else 'fails'}"
                for b in check["by_pattern"])
            print(f"  {check['id']} ({check['text']}): {verdict}; {check['detail']} "
                  f"({by_pattern}); {check['noise_detail']}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--parts", default="escalation_min,interference_static")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/hx_ordering_seeds.json"))
    args = ap.parse_args()
    parts = [p for p in args.parts.split(",") if p]
    published = json.loads(PUBLISHED.read_text(encoding="utf-8"))
    cache = json.loads(args.cache.read_text(encoding="utf-8")) if args.cache.exists() else {}
    items = [(p, c) for p, c in ordering_configs(args.seeds) if p["part"] in parts]
    todo = [item for item in items if point_key(item[0]) not in cache]
    with Pool(max(1, args.processes)) as pool:
        for done, (key, record) in enumerate(pool.imap_unordered(run_point, todo), start=1):
            cache[key] = record
            args.cache.write_text(json.dumps(cache), encoding="utf-8")
            print(f"{done}/{len(todo)} {key}", file=sys.stderr, flush=True)
    shared, differ = check_reference(cache)
    print(f"runs shared with the stored reference: {shared}, of which with other cycles: "
          f"{len(differ)}{' (' + ', '.join(differ[:5]) + ')' if differ else ''}")
    records = [cache[point_key(p)] for p, _ in items]
    report(records, parts, published)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
