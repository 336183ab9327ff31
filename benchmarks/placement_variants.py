"""Placements the study's simulator could have given a Table 4 job, against the formula's.

docs/domain.md (sections 2.1 and 6.9): CaMinOS, the study's simulator, runs task
``i`` on the ``i``-th server its selection returns. Where its selections and the
study's formulas could differ, this script runs Table 4's points (interference,
Omni-WAR, the five kernels) with the selection's placement and prints
``T_diagonal / T_policy`` per seed averaged over the kernels, with a two-sided
95 % Student-t interval, beside the stored reference's (the formula's placement;
its Diagonal runs are the baseline of both). Variants:

* ``random_switch_sorted``: Random Switch with its ranks sorted by endpoint id,
  as CaMinOS's random switch selection sorts its servers (64 and 128 ranks);
* ``rectangular_4x4``: a 128-rank Rectangular job as CaMinOS's nested
  rectangle selection shapes it, a 4 x 4 block of switches (the formula's union
  of two partitions is 2 x 8), ranks in the 2 x 4 partition's order (switch id
  ``x + n y``, ``y`` fastest: switches 0, 8, 16, 24, 1, 9, ...);
* ``rectangular_4x4_by_index``: the same block with its ranks by server index
  (``x`` fastest: switches 0, 1, 2, 3, 8, 9, ...), as CaMinOS sorts them.

Each run is cached on disk (``--cache``, JSON), so a rerun only reports.

Usage: .venv/bin/python benchmarks/placement_variants.py [--variants a,b] [--seeds 8]
       [--processes 2] [--cache /tmp/hx_placement_variants.json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
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

REFERENCE = ROOT / "simulation" / "reproduction_reference.json"
PUBLISHED = ROOT / "simulation" / "study_published.json"
SIDE = STUDY_MACHINE["sides"][0]
C = STUDY_MACHINE["concentration"]


def _block(y_fastest: bool) -> Callable[[np.ndarray], np.ndarray]:
    """The (n/2) x (n/2) block of switches at the origin, every port (switch id x + n y)."""
    half = range(SIDE // 2)
    pairs = [(x, y) for x in half for y in half] if y_fastest else \
        [(x, y) for y in half for x in half]
    return lambda _formula: np.array([(x + SIDE * y) * C + port for x, y in pairs
                                      for port in range(C)], dtype=np.int64)


@dataclass(frozen=True)
class Variant:
    policy: str
    ranks: tuple[int, ...]
    label: str
    target: Callable[[np.ndarray], np.ndarray]  # the formula's target -> the variant's


VARIANTS = {
    "random_switch_sorted": Variant("random_switch", TABLE4_RANKS, "sorted by id", np.sort),
    "rectangular_4x4": Variant("rectangular", (128,), "4 x 4 block", _block(True)),
    "rectangular_4x4_by_index": Variant("rectangular", (128,), "4 x 4, by index",
                                        _block(False)),
}


def _key(variant: str, kernel: str, seed: int, ranks: int) -> str:
    return f"{variant}|{kernel}|{seed}|{ranks}"


def run_variant(task: tuple[str, str, int, int]) -> tuple[str, int]:
    """Target completion cycles of one Table 4 point placed as ``variant`` places it."""
    name, kernel, seed, ranks = task
    variant = VARIANTS[name]
    cfg = SimConfig.from_dict({
        "sides": list(STUDY_MACHINE["sides"]), "concentration": C, "vc_sets": "shared",
        "scenario": "interference", "routing": "omniwar", "policy": variant.policy,
        "pattern": kernel, "ranks": ranks, "seed": seed})
    result = simulate(cfg, [variant.target(build_partitions(cfg)[0])])
    app = next(a for a in result.apps if a.role == "app")
    return _key(name, kernel, seed, ranks), int(app.completion_cycles)


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


def _report_line(ranks: int, label: str, policy: str, cycles: dict, ref: dict, seeds: int,
                 published: float) -> str | None:
    per_seed, per_kernel = [], {k: [] for k in TABLE4_KERNELS}
    for seed in range(seeds):
        pairs = [(k, ref.get(("diagonal", k, seed, ranks)), cycles.get((k, seed)))
                 for k in TABLE4_KERNELS]
        if all(base and mine for _, base, mine in pairs):
            per_seed.append(statistics.fmean(base / mine for _, base, mine in pairs))
            for k, base, mine in pairs:
                per_kernel[k].append(base / mine)
    if not per_seed:
        return None
    kernels = ", ".join(f"{statistics.fmean(v):.3f}" for v in per_kernel.values())
    return (f"  {policy:13s} {ranks:4d} ranks, {label:16s} {_row(per_seed):>16s} ({len(per_seed)} "
            f"seeds)  published {published:.2f}, {statistics.fmean(per_seed) - published:+.3f}"
            f"  kernels {kernels}")


def report(cache: dict[str, int], names: list[str], seeds: int) -> None:
    ref = _reference_cycles()
    published = json.loads(PUBLISHED.read_text(encoding="utf-8"))["table4"]["values"]
    print("T_diagonal / T_policy over the five kernels, per seed; mean +- 95 % t "
          "half-width; published; per kernel (" + ", ".join(TABLE4_KERNELS) + ")")
    shown: set[tuple[str, int]] = set()
    for name in names:
        v = VARIANTS[name]
        for ranks in v.ranks:
            pub = published[str(ranks)][v.policy]
            lines = []
            if (v.policy, ranks) not in shown:
                shown.add((v.policy, ranks))
                formula = {(k, s): ref.get((v.policy, k, s, ranks))
                           for k in TABLE4_KERNELS for s in range(seeds)}
                lines.append(_report_line(ranks, "formula", v.policy, formula, ref, seeds, pub))
            mine = {(k, s): cache.get(_key(name, k, s, ranks))
                    for k in TABLE4_KERNELS for s in range(seeds)}
            lines.append(_report_line(ranks, v.label, v.policy, mine, ref, seeds, pub))
            for line in lines:
                if line:
                    print(line)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variants", default=",".join(VARIANTS),
                    help="comma-separated: " + ", ".join(VARIANTS))
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/hx_placement_variants.json"))
    args = ap.parse_args()
    names = [n.strip() for n in args.variants.split(",") if n.strip()]
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        ap.error(f"--variants: unknown {', '.join(unknown)}; choose from {', '.join(VARIANTS)}")
    cache = json.loads(args.cache.read_text(encoding="utf-8")) if args.cache.exists() else {}
    todo = [(n, k, s, r) for n in names for r in VARIANTS[n].ranks for k in TABLE4_KERNELS
            for s in range(args.seeds) if _key(n, k, s, r) not in cache]
    with Pool(max(1, args.processes)) as pool:
        for done, (key, cycles) in enumerate(pool.imap_unordered(run_variant, todo), start=1):
            cache[key] = cycles
            args.cache.write_text(json.dumps(cache), encoding="utf-8")
            print(f"{done}/{len(todo)} {key} {cycles}", file=sys.stderr, flush=True)
    report(cache, names, args.seeds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
