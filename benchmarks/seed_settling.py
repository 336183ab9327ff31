"""What settling a split live answer with more seeds buys, replayed on recorded runs.

A live answer's first seeds (``HX_PREDICTION_SEEDS``, two) can split on the fastest
policy; the portal then runs more seeds for the fastest and its rivals only, one round
at a time, up to ``HX_PREDICTION_MAX_SEEDS`` (``recommendations.services.seeds``). This
replays that rule, the portal's own functions, on the per-seed cycles that
``live_seed_noise.py`` printed (every policy at seeds 0-7 of the agreement's live
cases: ``docs/evidence/live_seed_noise.txt`` by default), for several budgets, and
prints per case the pick, its cost on the mean of every recorded seed (the best
estimate there is; it includes the seeds the rule ran, so it favours the rule a
little), the extra runs and the waves they take (a wave is one run's time: a round of r runs
on p worker processes takes ceil(r / p) of them; the portal starts a round only when
it fits the time left before the deadline, which this replay does not model).

The portal settles only among the policies the study's rules do not refuse (a
candidate sharing switches with other jobs on a loaded machine needs a clear win):
the replay rebuilds each case's candidates as ``calibration_agreement.py`` does and
applies the same rules (``--no-rules``: as if none were refused). The 16x16 cases
recorded three policies only, so their rules see those three.

Usage: .venv/bin/python benchmarks/seed_settling.py [--report FILE] [--budgets 2,4,6,8]
       [--processes 2] [--first-seeds 2] [--no-rules]
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _calibration_runs import MachineShape, live_occupancy, live_tasks, setup_django
from calibration_agreement import LIVE_SEED, _candidates

from allocation.hyperx import ONLINE_POLICIES

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_REPORT = ROOT / "docs" / "evidence" / "live_seed_noise.txt"
CASE = re.compile(r"^(\d+x\d+ c=\d+ \S+ \d+@\d+%)")
LABEL = re.compile(r"^(\d+)x(\d+) c=(\d+) (\S+) (\d+)@(\d+)%$")
POLICY = re.compile(r"^\s+(\w+)\s+mean\s.*?seeds \d+: ([\d:, ]+?)\s+\(first")


def parse_report(text: str) -> dict[str, dict[str, dict[int, int]]]:
    """{case: {policy: {seed: cycles}}} from ``live_seed_noise.py``'s printout.

    >>> parse_report('''8x8 c=8 all2all 64@50% (live machine)
    ...   row     mean   110 +-  9 ( 8.2%)  seeds 2: 0:100, 1:120  (first two seeds' mean 110)
    ... ''')
    {'8x8 c=8 all2all 64@50%': {'row': {0: 100, 1: 120}}}
    """
    cases: dict[str, dict[str, dict[int, int]]] = {}
    case = None
    for line in text.splitlines():
        if found := CASE.match(line):
            case = found.group(1)
            cases[case] = {}
        elif case and (found := POLICY.match(line)):
            cases[case][found.group(1)] = {
                int(s): int(c) for s, c in (pair.split(":") for pair in
                                            found.group(2).split(", "))}
    return cases


class Replay(NamedTuple):
    pick: str
    extra_runs: int
    waves: int  # one run's time each: a round of r runs on p processes takes ceil(r / p)
    seeds: int  # the fastest's seeds at the end


class Rules(NamedTuple):
    """What the study's refusal rules read of a case: its candidates (switch locality,
    whole free switches broken) and the share of the machine other jobs hold."""

    candidates: list[dict]
    held_fraction: float


def case_rules(label: str) -> Rules | None:
    """The rules' inputs for a live case of ``calibration_agreement.py`` (its label as
    ``live_seed_noise.py`` prints it), rebuilt the way that script builds the case."""
    import numpy as np

    from allocation.hyperx.fragmentation import broken_switches

    found = LABEL.match(label)
    if found is None:
        return None
    x, y, c, pattern, n, load = found.groups()
    shape = MachineShape((int(x), int(y)), int(c))
    u = int(load) / 100
    held = live_occupancy(shape, u, LIVE_SEED + int(100 * u) + shape.node_count)
    candidates, _ = _candidates(shape, live_tasks(shape, pattern, int(n), held,
                                                  ONLINE_POLICIES, (0,), ("rules",)))
    available = np.ones(shape.node_count, dtype=bool)
    available[held] = False
    for candidate in candidates:
        candidate["broken_switches"] = broken_switches(
            available, np.asarray(candidate["endpoints"], dtype=np.int64), shape.concentration)
    return Rules(candidates, held.size / shape.node_count)


def contenders(per_seed: dict[str, dict[int, int]], rules: Rules | None
               ) -> dict[str, dict[int, int]]:
    """The policies the rules do not refuse on these seeds' means (all without rules)."""
    from recommendations.services.ranking import refused_policies
    from recommendations.services.seeds import mean_cycles

    if rules is None:
        return per_seed
    refused = refused_policies(rules.candidates, rules.held_fraction, mean_cycles(per_seed))
    return {p: c for p, c in per_seed.items() if p not in refused}


def replay(recorded: dict[str, dict[int, int]], first_seeds: int, max_seeds: int,
           processes: int, rules: Rules | None = None) -> Replay:
    """The portal's rule on recorded runs: the first seeds for every policy, then
    ``settling_round`` among the policies the rules do not refuse until it asks for
    nothing or for a seed not recorded; the pick is the fastest of those."""
    from recommendations.services.seeds import mean_cycles, seed_rivals, settling_round

    per_seed = {p: {s: c[s] for s in range(first_seeds)} for p, c in recorded.items()}
    asked = {(p, s) for p, c in per_seed.items() for s in c}
    extra = waves = 0
    while runs := settling_round(contenders(per_seed, rules), asked, max_seeds, processes):
        if any(s not in recorded[p] for p, seeds in runs.items() for s in seeds):
            break  # the recording ends here
        for policy, seeds in runs.items():
            for seed in seeds:
                per_seed[policy][seed] = recorded[policy][seed]
                asked.add((policy, seed))
                extra += 1
        waves += math.ceil(sum(map(len, runs.values())) / processes)
    open_to = contenders(per_seed, rules)
    means = mean_cycles(open_to)
    fastest = seed_rivals(open_to)[0] if len(open_to) > 1 else min(means, key=means.get)
    return Replay(fastest, extra, waves, len(per_seed[fastest]))


def best(recorded: dict[str, dict[int, int]], rules: Rules | None = None) -> str:
    """The right answer on every recorded seed: the fastest policy the rules do not
    refuse on those seeds' means."""
    means = {p: sum(c.values()) / len(c) for p, c in contenders(recorded, rules).items()}
    return min(means, key=means.get)


def cost(recorded: dict[str, dict[int, int]], pick: str, rules: Rules | None = None
         ) -> float:
    """The pick's mean over every recorded seed against the right answer's, minus 1."""
    means = {p: sum(c.values()) / len(c) for p, c in recorded.items()}
    return means[pick] / means[best(recorded, rules)] - 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--report", type=Path, default=DEFAULT_REPORT)
    parser.add_argument("--budgets", default="2,4,6,8",
                        help="HX_PREDICTION_MAX_SEEDS values to replay (2: no settling)")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--first-seeds", type=int, default=2)
    parser.add_argument("--no-rules", action="store_true",
                        help="as if the study's rules refused no policy")
    args = parser.parse_args()
    setup_django()
    budgets = [int(b) for b in args.budgets.split(",")]
    cases = {c: r for c, r in parse_report(args.report.read_text()).items()
             if len(r) > 1 and min(map(len, r.values())) > args.first_seeds}
    print(f"# {len(cases)} recorded cases from {args.report.name}, first seeds "
          f"{args.first_seeds}, {args.processes} processes, "
          f"{'no refusal rules' if args.no_rules else 'the refusal rules on each case'}; "
          "cost = the pick's mean over every recorded seed / the right answer's - 1 (the "
          "fastest the rules allow on those means)")
    header = "case".ljust(28) + "best".ljust(24) + "".join(
        f"max {b}: pick, cost, +runs/waves".ljust(50) for b in budgets)
    print(header)
    totals = {b: [] for b in budgets}
    for case, recorded in cases.items():
        rules = None if args.no_rules else case_rules(case)
        line = case.ljust(28) + best(recorded, rules).ljust(24)
        for budget in budgets:
            found = replay(recorded, args.first_seeds, budget, args.processes, rules)
            miss = cost(recorded, found.pick, rules)
            totals[budget].append((miss, found.extra_runs, found.waves))
            line += (f"{found.pick:22s} {miss:6.2%}  +{found.extra_runs}/{found.waves}"
                     ).ljust(50)
        print(line)
    print()
    for budget, rows in totals.items():
        misses = [m for m, _, _ in rows]
        print(f"max {budget} seeds: the best in {sum(m == 0 for m in misses)} of {len(rows)}, "
              f"within 1 % in {sum(m <= 0.01 for m in misses)}, mean cost "
              f"{sum(misses) / len(rows):.2%}, max {max(misses):.2%}; extra runs "
              f"{sum(r for _, r, _ in rows)} in all ({sum(r > 0 for _, r, _ in rows)} cases "
              f"ran more seeds), waves of runs max {max(n for _, _, n in rows)}")


if __name__ == "__main__":
    main()
