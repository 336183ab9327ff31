"""Does Random Switch number its ranks in its draw, or by server index?

docs/domain.md (sections 2.1 and 6.9): the study's simulator returns the servers
of its block selections sorted by index, and a job over two partitions now takes
that order (placement version 2). Its random switch selection would sort too,
while the study's Random Switch formula keeps the random draw's order. This
script runs Table 4's Random Switch points (interference, Omni-WAR, the five
kernels, 64 and 128 ranks) with the ranks sorted by endpoint id, and prints
``T_diagonal / T_random_switch`` per seed averaged over the kernels, with a
two-sided 95 % Student-t interval, beside the stored reference's (the formula's
order; its Diagonal runs are the baseline of both).

Each run is cached on disk (``--cache``, JSON), so a rerun only reports.

Usage: .venv/bin/python benchmarks/random_switch_order.py [--seeds 8]
       [--processes 2] [--cache /tmp/hx_random_switch_order.json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
from multiprocessing import Pool
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from simulation.engine import SimConfig, simulate  # noqa: E402
from simulation.engine.scenarios import build_partitions  # noqa: E402
from simulation.presets import STUDY_MACHINE  # noqa: E402
from simulation.reproduction_preset import TABLE4_KERNELS, TABLE4_RANKS  # noqa: E402

POLICY = "random_switch"
REFERENCE = ROOT / "simulation" / "reproduction_reference.json"
PUBLISHED = ROOT / "simulation" / "study_published.json"


def _key(kernel: str, seed: int, ranks: int) -> str:
    return f"{POLICY}|{kernel}|{seed}|{ranks}"


def run_sorted(task: tuple[str, int, int]) -> tuple[str, int]:
    """Target completion cycles of one Table 4 point with the ranks sorted by endpoint id."""
    kernel, seed, ranks = task
    cfg = SimConfig.from_dict({
        "sides": list(STUDY_MACHINE["sides"]), "concentration": STUDY_MACHINE["concentration"],
        "vc_sets": "shared", "scenario": "interference", "routing": "omniwar",
        "policy": POLICY, "pattern": kernel, "ranks": ranks, "seed": seed})
    target = np.sort(build_partitions(cfg)[0])
    result = simulate(cfg, [target])
    app = next(a for a in result.apps if a.role == "app")
    return _key(kernel, seed, ranks), int(app.completion_cycles)


def _reference_cycles() -> dict[tuple[str, str, int, int], int]:
    body = json.loads(REFERENCE.read_text(encoding="utf-8"))
    return {(r["point"]["policy"], r["point"]["pattern"], r["point"]["seed"],
             r["point"]["ranks"]): r["completion_cycles"]
            for r in body["records"] if r["point"]["part"] == "table4"}


def _row(ratios: list[float]) -> str:
    mean = statistics.fmean(ratios)
    half = (stats.t.ppf(0.975, len(ratios) - 1) * statistics.stdev(ratios)
            / math.sqrt(len(ratios))) if len(ratios) > 1 else math.nan
    return f"{mean:.3f} +- {half:.3f}"


def report(cache: dict[str, int], seeds: int) -> None:
    ref = _reference_cycles()
    published = json.loads(PUBLISHED.read_text(encoding="utf-8"))["table4"]["values"]
    print("T_diagonal / T_random_switch over the five kernels, per seed; mean +- 95 % t "
          "half-width; published; per kernel (" + ", ".join(TABLE4_KERNELS) + ")")
    for ranks in TABLE4_RANKS:
        pub = published[str(ranks)][POLICY]
        variants = {"formula order": {(k, s): ref.get((POLICY, k, s, ranks))
                                      for k in TABLE4_KERNELS for s in range(seeds)},
                    "sorted by id": {(k, s): cache.get(_key(k, s, ranks))
                                     for k in TABLE4_KERNELS for s in range(seeds)}}
        for label, cycles in variants.items():
            per_seed, per_kernel = [], {k: [] for k in TABLE4_KERNELS}
            for seed in range(seeds):
                pairs = [(k, ref.get(("diagonal", k, seed, ranks)), cycles[k, seed])
                         for k in TABLE4_KERNELS]
                if all(base and mine for _, base, mine in pairs):
                    per_seed.append(statistics.fmean(base / mine for _, base, mine in pairs))
                    for k, base, mine in pairs:
                        per_kernel[k].append(base / mine)
            if not per_seed:
                continue
            kernels = ", ".join(f"{statistics.fmean(v):.3f}" for v in per_kernel.values())
            print(f"  {ranks:4d} ranks, {label:14s} {_row(per_seed):>16s} ({len(per_seed)} seeds)"
                  f"  published {pub:.2f}, {statistics.fmean(per_seed) - pub:+.3f}"
                  f"  kernels {kernels}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/hx_random_switch_order.json"))
    args = ap.parse_args()
    cache = json.loads(args.cache.read_text(encoding="utf-8")) if args.cache.exists() else {}
    todo = [(k, s, r) for r in TABLE4_RANKS for k in TABLE4_KERNELS for s in range(args.seeds)
            if _key(k, s, r) not in cache]
    with Pool(max(1, args.processes)) as pool:
        for done, (key, cycles) in enumerate(pool.imap_unordered(run_sorted, todo), start=1):
            cache[key] = cycles
            args.cache.write_text(json.dumps(cache), encoding="utf-8")
            print(f"{done}/{len(todo)} {key} {cycles}", file=sys.stderr, flush=True)
    report(cache, args.seeds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
