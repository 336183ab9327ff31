"""Which target traffic decides the published interference ordering?

docs/domain.md (section 6.9): the study's interference experiment with Omni-WAR
and static targets finds Random Endpoint and Full Spread the two worst policies
and Diagonal the best (orderings b1 and b2 of ``simulation/study_published.json``),
but our sources do not say which synthetic pattern its targets sent. The
reproduction preset runs ``uniform`` and ``switch_permutation`` targets; this
script runs its interference points (64 ranks, 64 packets per task at rate 1.0,
background random permutation at 1.0, Omni-WAR, shared VCs) for each of the
study's three synthetic patterns, ``uniform``, ``permutation`` (a fixed random
partner) and ``switch_permutation`` (groups of ``c`` ranks to groups), and prints
for each set of patterns the policies' target completion relative to Diagonal's
(same pattern and seed, averaged over the set's patterns per seed; mean and
two-sided 95 % Student-t interval over the seeds, lower is better) and the
verdicts of b1 and b2, checked as the reproduction report checks them.

Each run is cached on disk (``--cache``, JSON), so a rerun only reports.

Usage: .venv/bin/python benchmarks/interference_targets.py [--seeds 6]
       [--processes 2] [--cache /tmp/hx_interference_targets.json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
from multiprocessing import Pool
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from allocation.hyperx.patterns import PERMUTATION, SWITCH_PERMUTATION, UNIFORM  # noqa: E402
from simulation.engine import SimConfig, simulate  # noqa: E402
from simulation.engine.scenarios import build_partitions  # noqa: E402
from simulation.presets import STUDY_MACHINE, STUDY_POLICIES  # noqa: E402
from simulation.reproduction import check_statement, mean_interval  # noqa: E402
from simulation.reproduction_preset import STATIC_RANKS, STATIC_TRAFFIC  # noqa: E402

PATTERNS = (UNIFORM, PERMUTATION, SWITCH_PERMUTATION)
PUBLISHED = ROOT / "simulation" / "study_published.json"
BASELINE = "diagonal"


def _key(policy: str, pattern: str, seed: int) -> str:
    return f"{policy}|{pattern}|{seed}"


def run_point(task: tuple[str, str, int]) -> tuple[str, int]:
    """Target completion cycles of one interference point."""
    policy, pattern, seed = task
    cfg = SimConfig.from_dict({
        "sides": list(STUDY_MACHINE["sides"]), "concentration": STUDY_MACHINE["concentration"],
        "vc_sets": "shared", "scenario": "interference", "routing": "omniwar",
        "policy": policy, "pattern": pattern, "ranks": STATIC_RANKS, "seed": seed,
        **STATIC_TRAFFIC})
    result = simulate(cfg, build_partitions(cfg))
    app = next(a for a in result.apps if a.role == "app")
    return _key(policy, pattern, seed), int(app.completion_cycles)


def _relative(cache: dict[str, int], policy: str, patterns: tuple[str, ...],
              seeds: range) -> list[float]:
    """Per seed: the mean over ``patterns`` of ``T_policy / T_diagonal``."""
    return [statistics.fmean(cache[_key(policy, p, s)] / cache[_key(BASELINE, p, s)]
                             for p in patterns) for s in seeds]


def report(cache: dict[str, int], seeds: range) -> None:
    statements = [o for o in json.loads(PUBLISHED.read_text(encoding="utf-8"))["orderings"]
                  if o["part"] == "interference_static"]
    print(f"Target completion / Diagonal's, {len(seeds)} seeds, mean +- 95 % t half-width "
          "(lower is better)")
    for size in range(1, len(PATTERNS) + 1):
        for patterns in itertools.combinations(PATTERNS, size):
            means, lines = {}, []
            for policy in STUDY_POLICIES:
                ratios = _relative(cache, policy, patterns, seeds)
                means[policy] = statistics.fmean(ratios)
                iv = mean_interval(ratios) if policy != BASELINE else None
                half = f" +- {iv['half_width']:.3f}" if iv else ""
                lines.append((means[policy], f"    {policy:16s} {means[policy]:.3f}{half}"))
            print("targets: " + " + ".join(patterns))
            for _, line in sorted(lines):
                print(line)
            for statement in statements:
                holds, detail = check_statement(statement["check"], means)
                print(f"    {statement['id']} ({statement['text']}): "
                      f"{'holds' if holds else 'fails'}; {detail}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=6)
    ap.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/hx_interference_targets.json"))
    args = ap.parse_args()
    seeds = range(args.seeds)
    cache = json.loads(args.cache.read_text(encoding="utf-8")) if args.cache.exists() else {}
    todo = [(pol, pat, s) for pol in STUDY_POLICIES for pat in PATTERNS for s in seeds
            if _key(pol, pat, s) not in cache]
    with Pool(max(1, args.processes)) as pool:
        for done, (key, cycles) in enumerate(pool.imap_unordered(run_point, todo), start=1):
            cache[key] = cycles
            args.cache.write_text(json.dumps(cache), encoding="utf-8")
            print(f"{done}/{len(todo)} {key} {cycles}", file=sys.stderr, flush=True)
    report(cache, seeds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
