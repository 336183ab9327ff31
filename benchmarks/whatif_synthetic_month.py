"""The one-click what-if on the demo machine, as evidence: a synthetic month.

The demo machine (8x8, c = 8, 512 nodes), a 30-day Lublin & Feitelson (2003)
batch workload at load factor 1.5 (``whatif.constants``), every online policy x
spares none / 2 / recommended (released after the benchmark), 3 seeds each,
with the default spare-model parameters (p_abn 0.005, alpha_abn 2, t_bench
30 s) and the analytic placement factor. Prints the side-by-side table (mean and
95 % Student-t interval over seeds), which scenario wins on each figure and by
how much against the runner-up and against Diagonal without spares. The seeds
vary the random policies, the slow nodes and the spare draws; the workload is
the same month in every run (workload seed 0).

Usage: python benchmarks/whatif_synthetic_month.py [--processes 2] \
           > docs/evidence/whatif_synthetic_month.txt
"""

from __future__ import annotations

import argparse
import sys
import time
from multiprocessing import get_context
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from allocation.hyperx import ONLINE_POLICIES, HyperX
from whatif import constants
from whatif.replay import (
    ModelParameters,
    Scenario,
    SpareRule,
    fit_to_machine,
    gather,
    run_one,
    synthetic_workload,
)

HX = HyperX((8, 8), 8)
MODEL = ModelParameters(p_abn=constants.DEFAULT_P_ABN, alpha_abn=constants.DEFAULT_ALPHA_ABN,
                        t_bench=constants.DEFAULT_T_BENCH)
JOBS = fit_to_machine(synthetic_workload(HX.n_endpoints, days=constants.SYNTHETIC_DAYS,
                                         load=constants.SYNTHETIC_LOAD, seed=0).jobs,
                      HX.n_endpoints)[0]
FIGURES = (("mean_wait_s", "mean wait (h)", 1 / 3600, "min"),
           ("p95_wait_s", "p95 wait (h)", 1 / 3600, "min"),
           ("mean_bounded_slowdown", "mean bounded slowdown", 1.0, "min"),
           ("utilisation", "utilisation", 1.0, "max"),
           ("makespan_s", "makespan (days)", 1 / 86400, "min"),
           ("node_hours_useful", "useful node-h", 1.0, "min"),
           ("node_hours_spares", "spares node-h", 1.0, "min"),
           ("node_hours_lost_slow", "lost-slow node-h", 1.0, "min"),
           ("locality_share", "locality share", 1.0, "max"))


def _task(args):
    policy, spares, seed = args
    return run_one(JOBS, HX, Scenario(policy, SpareRule.parse(spares)), MODEL, seed)


def _fmt(iv: dict, scale: float) -> str:
    return f"{iv['mean'] * scale:.4g} [{iv['low'] * scale:.4g}, {iv['high'] * scale:.4g}]"


def _rel(x: float, y: float) -> str:
    return f"{(x - y) / y * 100:+.1f} %" if y else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args()
    tasks = [(p, s, z) for p in ONLINE_POLICIES for s in constants.DEMO_SPARES
             for z in range(constants.DEMO_SEEDS)]
    started = time.perf_counter()
    with get_context("fork").Pool(args.processes) as pool:
        runs = pool.map(_task, tasks)
    wall = time.perf_counter() - started
    entries = gather(runs)
    offered = sum(j.nodes * j.runtime for j in JOBS) / (HX.n_endpoints * 30 * 86400)
    print(f"What-if on a synthetic month, demo machine 8x8 c=8 ({HX.n_endpoints} nodes)")
    print(f"workload: Lublin & Feitelson 2003 batch model, {constants.SYNTHETIC_DAYS} days, "
          f"load factor {constants.SYNTHETIC_LOAD}, workload seed 0: {len(JOBS)} jobs, "
          f"offered load {offered:.2f} of the machine (recorded run times)")
    print(f"model: p_abn {MODEL.p_abn}, alpha_abn {MODEL.alpha_abn}, t_bench {MODEL.t_bench} s "
          f"(defaults: no estimate), placement factor analytic, comm share 0.5, "
          f"spares released after the benchmark")
    print(f"{len(tasks)} runs ({len(ONLINE_POLICIES)} policies x {len(constants.DEMO_SPARES)} "
          f"spare rules x {constants.DEMO_SEEDS} seeds) in {wall:.0f} s on "
          f"{args.processes} processes; values: mean [95 % interval over seeds]")
    print()
    for key, label, scale, way in FIGURES:
        print(f"== {label} ({'lower' if way == 'min' else 'higher'} is better)")
        ranked = sorted(entries, key=lambda e: e["details"]["intervals"][key]["mean"],
                        reverse=way == "max")
        for e in ranked:
            print(f"  {e['policy']:22} spares {e['spares']:12} "
                  f"{_fmt(e['details']['intervals'][key], scale)}")
        best, second = ranked[0], ranked[1]
        base = next(e for e in entries if e["policy"] == "diagonal" and e["spares"] == "none")
        b = best["details"]["intervals"][key]["mean"]
        s = second["details"]["intervals"][key]["mean"]
        d = base["details"]["intervals"][key]["mean"]
        bi, si = best["details"]["intervals"][key], second["details"]["intervals"][key]
        overlap = bi["low"] <= si["high"] and si["low"] <= bi["high"]
        print(f"  best: {best['policy']} / {best['spares']}, {_rel(b, s)} vs the runner-up "
              f"({second['policy']} / {second['spares']}; intervals "
              f"{'overlap' if overlap else 'apart'}), {_rel(b, d)} vs diagonal / none")
        print()


if __name__ == "__main__":
    main()
