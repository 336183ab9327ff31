"""Does the crossbar's granularity explain the two published figures not reproduced?

docs/domain.md (section 6.9) found one structural difference between the engine and
the study's simulator that acts on the interference experiment: the study's router
holds an input VC and an output VC for a crossing, the engine (``crossbar: port``)
the whole input and output ports. This script runs the reproduction sweep's points
of the two figures with both granularities (``crossbar: port`` and ``vc``), the same
seeds, and prints each policy's ratio to Diagonal with a two-sided 95 % Student-t
interval over the seeds:

* ``static``: interference, Omni-WAR, 64-rank ``uniform`` and ``switch_permutation``
  targets (64 packets per task at rate 1.0), target completion / Diagonal's (lower
  is better); the study: Random Endpoint and Full Spread the two worst, Diagonal the
  best.
* ``table4``: Table 4 at ``--ranks`` ranks, ``T_diagonal / T_policy`` per seed
  averaged over the five kernels (higher is better), against the published value.

Each run is cached on disk (``--cache``, JSON, keyed by the configuration), so a
rerun only reports and an interrupted one keeps what finished. The ``port`` runs
that the reproduction reference (``simulation/reproduction_reference.json``)
already holds are taken from it when it was made by this engine version (the
engine is deterministic: the same configuration gives the same cycles).

Usage: .venv/bin/python benchmarks/crossbar_granularity.py [--seeds 6]
       [--table4-seeds 4] [--ranks 128] [--processes 2] [--parts static,table4]
       [--cache /tmp/hx_crossbar.json] [--no-run]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from multiprocessing import Pool
from pathlib import Path

from scipy import stats

from simulation.engine import ENGINE_VERSION, SimConfig, simulate
from simulation.presets import STUDY_MACHINE, STUDY_POLICIES
from simulation.reproduction_preset import (
    INTERFERENCE_PATTERNS,
    STATIC_RANKS,
    STATIC_TRAFFIC,
    TABLE4_KERNELS,
)

PUBLISHED = json.loads((Path(__file__).resolve().parent.parent / "simulation"
                        / "study_published.json").read_text(encoding="utf-8"))
GRANULARITIES = ("port", "vc")


def _config(crossbar: str, policy: str, pattern: str, ranks: int, seed: int,
            extra: dict) -> dict:
    """A reproduction point's configuration (the study machine, shared VCs, Omni-WAR)."""
    cfg = {"sides": list(STUDY_MACHINE["sides"]), "concentration": STUDY_MACHINE["concentration"],
           "vc_sets": "shared", "scenario": "interference", "routing": "omniwar",
           "policy": policy, "pattern": pattern, "ranks": ranks, "seed": seed, **extra}
    if crossbar != "port":
        cfg["crossbar"] = crossbar
    return cfg


REFERENCE = Path(__file__).resolve().parent.parent / "simulation" / "reproduction_reference.json"


def from_reference() -> dict:
    """Cache entries of the reference's Table 4 and static interference runs (``port``)."""
    body = json.loads(REFERENCE.read_text(encoding="utf-8"))
    if body.get("engine_version") != ENGINE_VERSION:
        return {}
    out = {}
    for rec in body["records"]:
        point = rec["point"]
        if point["part"] not in ("table4", "interference_static") or not rec["completion_cycles"]:
            continue
        extra = STATIC_TRAFFIC if point["part"] == "interference_static" else {}
        cfg = _config("port", point["policy"], point["pattern"], point["ranks"], point["seed"],
                      extra)
        out[_key(cfg)] = {"cycles": rec["completion_cycles"], "cpu_s": 0.0, "reference": True}
    return out


def _key(cfg: dict) -> str:
    return json.dumps(cfg, sort_keys=True)


def _run(cfg: dict) -> tuple[str, int, float]:
    """Target completion cycles of one run and its CPU seconds."""
    start = time.process_time()
    result = simulate(SimConfig.from_dict(cfg))
    target = next(a for a in result.apps if a.role == "app")
    return _key(cfg), int(target.completion_cycles), time.process_time() - start


def _interval(values: list[float]) -> tuple[float, float]:
    """Mean and the half-width of its two-sided 95 % Student-t interval."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, math.nan
    half = stats.t.ppf(0.975, len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return mean, half


def static_configs(seeds: int) -> list[dict]:
    return [_config(xb, policy, pattern, STATIC_RANKS, seed, STATIC_TRAFFIC)
            for xb in GRANULARITIES for policy in STUDY_POLICIES
            for pattern in INTERFERENCE_PATTERNS for seed in range(seeds)]


def table4_configs(seeds: int, ranks: int) -> list[dict]:
    return [_config(xb, policy, kernel, ranks, seed, {})
            for xb in GRANULARITIES for policy in STUDY_POLICIES
            for kernel in TABLE4_KERNELS for seed in range(seeds)]


def report_static(cache: dict, seeds: int) -> None:
    print(f"\nstatic interference, Omni-WAR, {STATIC_RANKS} ranks, 64 packets per task, "
          f"seeds 0-{seeds - 1}: target completion / Diagonal's (lower is better), "
          "mean +- 95 % t-interval")
    for xb in GRANULARITIES:
        print(f"  crossbar: {xb}")
        print(f"    {'policy':16s} " + " ".join(f"{p:>22s}" for p in (*INTERFERENCE_PATTERNS,
                                                                      "pooled")))
        order = []
        for policy in STUDY_POLICIES:
            cells, pooled = [], []
            for pattern in INTERFERENCE_PATTERNS:
                ratios = []
                for seed in range(seeds):
                    mine = cache.get(_key(_config(xb, policy, pattern, STATIC_RANKS, seed,
                                                  STATIC_TRAFFIC)))
                    base = cache.get(_key(_config(xb, "diagonal", pattern, STATIC_RANKS, seed,
                                                  STATIC_TRAFFIC)))
                    if mine and base:
                        ratios.append(mine["cycles"] / base["cycles"])
                pooled += ratios
                cells.append(_cell(ratios))
            if pooled:
                order.append((statistics.fmean(pooled), policy))
            print(f"    {policy:16s} " + " ".join(f"{c:>22s}" for c in (*cells, _cell(pooled))))
        ranked = [p for _, p in sorted(order)]
        if len(ranked) < len(STUDY_POLICIES):
            continue
        print(f"    pooled order, best first: {', '.join(ranked)}")
        worst2 = set(ranked[-2:])
        print(f"    study's ordering (Random Endpoint and Full Spread worst, Diagonal best): "
              f"worst two {'match' if worst2 == {'random_endpoint', 'full_spread'} else 'differ'}, "
              f"best {'matches' if ranked[0] == 'diagonal' else 'differs'}")


def _cell(values: list[float]) -> str:
    if not values:
        return "-"
    mean, half = _interval(values)
    return f"{mean:.3f} +- {half:.3f} ({len(values)})"


def report_table4(cache: dict, seeds: int, ranks: int) -> None:
    published = PUBLISHED["table4"]["values"].get(str(ranks), {})
    print(f"\nTable 4 at {ranks} ranks, seeds 0-{seeds - 1}: T_diagonal / T_policy averaged "
          "over the five kernels (per seed), mean +- 95 % t-interval; published; difference")
    for xb in GRANULARITIES:
        print(f"  crossbar: {xb}")
        for policy in STUDY_POLICIES:
            per_seed, per_kernel = [], {k: [] for k in TABLE4_KERNELS}
            for seed in range(seeds):
                ratios = []
                for kernel in TABLE4_KERNELS:
                    mine = cache.get(_key(_config(xb, policy, kernel, ranks, seed, {})))
                    base = cache.get(_key(_config(xb, "diagonal", kernel, ranks, seed, {})))
                    if mine and base:
                        ratios.append(base["cycles"] / mine["cycles"])
                        per_kernel[kernel].append(base["cycles"] / mine["cycles"])
                if len(ratios) == len(TABLE4_KERNELS):
                    per_seed.append(statistics.fmean(ratios))
            pub = published.get(policy)
            if not per_seed:
                continue
            mean, _ = _interval(per_seed)
            diff = f"{mean - pub:+.3f}" if pub is not None else "-"
            kernels = ", ".join(f"{statistics.fmean(v):.3f}" for v in per_kernel.values() if v)
            print(f"    {policy:16s} {_cell(per_seed):>22s}  published {pub}  {diff:>7s}  "
                  f"kernels ({', '.join(TABLE4_KERNELS)}): {kernels}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=6, help="seeds of the static part")
    ap.add_argument("--table4-seeds", type=int, default=4)
    ap.add_argument("--ranks", type=int, default=128)
    ap.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--parts", default="static,table4")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/hx_crossbar.json"))
    ap.add_argument("--no-run", action="store_true")
    args = ap.parse_args()
    parts = set(args.parts.split(","))
    cache = json.loads(args.cache.read_text()) if args.cache.exists() else {}
    cache = {**from_reference(), **cache}
    todo = []
    if "static" in parts:
        todo += static_configs(args.seeds)
    if "table4" in parts:
        todo += table4_configs(args.table4_seeds, args.ranks)
    todo = [c for c in todo if _key(c) not in cache]
    print(f"engine {ENGINE_VERSION}; {len(todo)} runs to make on {args.processes} processes",
          flush=True)
    if todo and not args.no_run:
        start = time.monotonic()
        with Pool(args.processes) as pool:
            for i, (key, cycles, cpu) in enumerate(pool.imap_unordered(_run, todo), 1):
                cache[key] = {"cycles": cycles, "cpu_s": round(cpu, 2)}
                args.cache.write_text(json.dumps(cache))
                if i % 10 == 0 or i == len(todo):
                    print(f"  {i}/{len(todo)} runs, {time.monotonic() - start:.0f} s", flush=True)
    cpu = sum(v["cpu_s"] for v in cache.values())
    print(f"{len(cache)} runs cached, {cpu:.0f} s of simulation CPU in all")
    if "static" in parts:
        report_static(cache, args.seeds)
    if "table4" in parts:
        report_table4(cache, args.table4_seeds, args.ranks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
