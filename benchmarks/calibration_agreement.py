"""Does a calibrated ranking pick what a live simulation picks?

For reference cases (machine shape, pattern, job size, load) the script builds both
answers a recommendation can give and compares them:

* live: the machine holds other jobs (``_calibration_runs.live_occupancy``: random
  power-of-two sizes placed by a seeded mix of row / diagonal / random_switch /
  random_endpoint, so the busy endpoints spread over switches; another kind of
  machine than the calibration's aged Slurm one, so the test is out of sample); each
  online policy's candidate (``allocate`` with seed 0 on it) is simulated at the
  study's volume with the portal's prediction config (``prediction_settings``),
  engine seeds (0, 1); the mean completion cycles rank the policies;
* calibrated: a :class:`~recommendations.calibration.CalibrationTable` built from real
  simulations of the default grid's points (restricted to the pattern, the loads and
  the grid sizes around the case's size: the table interpolates between the two
  neighbouring sizes only, so the answer is the full grid's), read at the case's size
  and load exactly as ``services.calibration.calibrated_answer`` does.

Per case: the live best policy, the calibrated best, top-1 agreement, Kendall tau-b
of the two orders, regret (live cycles of the calibrated choice / live best - 1), the
calibrated cycles' median error against the live ones, the caveats the portal's note
would carry, and the portal's whole answer: every policy simulated live where its
runs fit the deadline, else the calibration's close call settled live where its runs
fit, else the calibration (``portal_answer``). Then a summary.

Every simulation is cached on disk (``--cache``), so a rerun only reports, and an
interrupted run keeps what finished. ``--no-run`` reports the cases already cached.

Usage: .venv/bin/python benchmarks/calibration_agreement.py [--processes 2]
       [--cases16 512@0.5,256@0.5] [--only8 | --only16] [--seeds16 0,1] [--seeds8 0,1]
       [--synthetic aged|contiguous|fragmented] [--pattern all2all] [--no-run]
       [--prediction-processes N]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from multiprocessing import Pool
from pathlib import Path

import numpy as np
from _calibration_runs import (
    Task,
    cached,
    contiguous_occupancy,
    default_cache_dir,
    live_occupancy,
    live_tasks,
    point_task,
    run_task,
    setup_django,
    shape_label,
)

from allocation.hyperx import ONLINE_POLICIES, MachineShape
from recommendations.calibration import default_grid, grid_points, synthetic_occupancy
from recommendations.calibration.grid import SEEDS, held_count
from recommendations.calibration.table import PointResult, build_table

SHAPE_8 = MachineShape((8, 8), 8)
SHAPE_16 = MachineShape((16, 16), 16)
LOADS = (0.0, 0.5, 0.75)
SIZES = (64, 128, 256, 512, 1024)
#: Seed of the live occupancy (per shape and load: a different machine each).
LIVE_SEED = 19
#: Seed of the calibration's machine under ``--synthetic fragmented``: another machine of
#: the live kind, never the one the live runs see.
FRAGMENTED_SEED = 7


def _cases(shape: MachineShape, spec: str | None) -> list[tuple[int, float]]:
    """(size, load) of the shape's cases: every size that fits at every load, or ``spec``."""
    if spec:
        return [(int(n), float(u)) for n, u in (item.split("@") for item in spec.split(","))]
    return [(n, u) for u in LOADS for n in SIZES
            if n <= shape.node_count - held_count(shape, u)]


def _needed_points(shape: MachineShape, pattern: str, cases: list[tuple[int, float]],
                   all_sizes: bool, seeds: tuple[int, ...] = SEEDS):
    """Grid points a table answering ``cases`` reads (every default size if ``all_sizes``),
    at calibration seeds ``seeds`` (the portal's grid: ``SEEDS``)."""
    loads = tuple(sorted({u for _, u in cases}))
    grid = default_grid(shape, patterns=(pattern,), loads=loads, seeds=seeds)
    points = grid_points(grid, shape)
    if all_sizes:
        return points
    want: dict[float, set[int]] = {}
    for n, u in cases:
        fitting = tuple(s for s in grid.sizes if s <= shape.node_count - held_count(shape, u))
        below = [s for s in fitting if s <= n]
        above = [s for s in fitting if s >= n]
        want.setdefault(u, set()).update(
            ([max(below)] if below else []) + ([min(above)] if above else []))
    return [p for p in points if p.node_count in want.get(p.load, set())]


def calibration_machine(shape: MachineShape, load: float, kind: str):
    """The endpoints other jobs hold on the machine the calibration points run on:
    ``aged``, the portal's (a machine Slurm has scheduled a while,
    :func:`synthetic_occupancy`); ``contiguous``, the portal's before 2026-12-04; as a
    what-if, ``fragmented``, one made like the live machines with another seed."""
    if kind == "aged":
        return synthetic_occupancy(shape, load)
    if kind == "contiguous":
        return contiguous_occupancy(shape, load)
    return live_occupancy(shape, load, FRAGMENTED_SEED + int(100 * load) + shape.node_count)


def plan(pattern: str, cases16: str, only8: bool, seeds16: tuple[int, ...] = SEEDS,
         big_first: bool = False, only16: bool = False,
         seeds8: tuple[int, ...] = SEEDS,
         synthetic_kind: str = "aged") -> tuple[list[tuple], list[Task]]:
    """(cases, tasks in the order to run: 8x8 first, then each 16x16 case with its points).
    ``seeds16``, ``seeds8``: the seeds of each shape's runs (live engine seeds and
    calibration seeds; the portal uses ``SEEDS`` for both). ``synthetic_kind``: the
    machine the calibration points run on (:func:`calibration_machine`)."""
    cases, tasks = [], []
    shapes = ([] if only16 else [(SHAPE_8, None, True, seeds8)]) + (
        [] if only8 else [(SHAPE_16, cases16, False, seeds16)])
    if big_first:
        shapes.reverse()
    for shape, spec, all_sizes, seeds in shapes:
        shape_cases = _cases(shape, spec)
        loads = {u for _, u in shape_cases}
        synthetic = {u: calibration_machine(shape, u, synthetic_kind) for u in loads}
        live = {u: live_occupancy(shape, u, LIVE_SEED + int(100 * u) + shape.node_count)
                for u in synthetic}
        seen: set[str] = set()
        for n, u in shape_cases:  # each case's calibration points, then its live runs
            points = _needed_points(shape, pattern, [(n, u)], all_sizes, seeds)
            case_tasks = [t for p in points if (t := point_task(shape, p, synthetic[u]))]
            case_live = live_tasks(shape, pattern, n, live[u], ONLINE_POLICIES, seeds,
                                   ("live", shape_label(shape), n, u))
            for t in case_tasks + case_live:
                if t.key not in seen:
                    seen.add(t.key)
                    tasks.append(t)
            cases.append((shape, n, u, case_tasks, case_live))
    return cases, tasks


def kendall_tau(a: dict[str, float], b: dict[str, float]) -> float:
    from scipy.stats import kendalltau

    keys = sorted(set(a) & set(b))
    if len(keys) < 2:
        return float("nan")
    return float(kendalltau([a[k] for k in keys], [b[k] for k in keys]).statistic)


def _candidates(shape: MachineShape, live_runs: list[Task]) -> tuple[list[dict], list[int]]:
    """The live case's candidates as a recommendation lists them (policy, endpoints,
    switch locality) and the other jobs' endpoints."""
    candidates, held = {}, []
    for t in live_runs:
        job = np.asarray(t.partitions[0], dtype=np.int64)
        per_switch = np.bincount(job // shape.concentration)
        local = bool(np.all(per_switch[per_switch > 0] == shape.concentration))
        candidates[t.label[-2]] = {"policy": t.label[-2], "endpoints": job.tolist(),
                                   "properties": {"switch_locality": local}}
        held = t.partitions[1] if len(t.partitions) > 1 else []
    return list(candidates.values()), held


def portal_notes(shape: MachineShape, n: int, u: float, live_runs: list[Task],
                 calibrated: dict[str, float], seed_spread: dict[str, float]) -> str:
    """Which caveats the portal's own rules append to this calibrated answer
    (``services.calibration.fragmentation_caveat``, ``line_sharing_caveat``, read
    against the portal's calibration machine, and ``close_call_caveat``):
    ``whole-switch``, ``line-sharing``, ``close-call``, joined by ``+``, or ``-``."""
    from allocation.models import Machine
    from recommendations.services import calibration as service

    machine = Machine(name="agreement", sides=list(shape.sides),
                      concentration=shape.concentration)
    listed, held = _candidates(shape, live_runs)
    notes = [name for name, text in (
        ("whole-switch", service.fragmentation_caveat(machine, listed, u, n)),
        ("line-sharing", service.line_sharing_caveat(machine, listed, held, u, n,
                                                     calibrated)),
        ("close-call", service.close_call_caveat(listed, calibrated, seed_spread))) if text]
    return "+".join(notes) or "-"


def portal_answer(shape: MachineShape, live_runs: list[Task], live: dict[str, float],
                  calibrated: dict[str, float], seed_spread: dict[str, float],
                  run_seconds: float) -> tuple[str, str]:
    """What the portal would answer, and how: ``live`` when every policy's runs fit the
    deadline on ``HX_PREDICTION_PROCESSES`` (its live best), ``settled`` when only the
    close call's do (its policies reordered by their live times:
    ``predictions.settled_close_call``), else ``calibrated``. Run times are the
    calibration's CPU seconds on this host, as the portal reads them."""
    from django.conf import settings

    from recommendations import constants
    from recommendations.services import calibration as service
    from recommendations.services.predictions import settled_close_call

    def fits(policies: int) -> bool:
        rounds = math.ceil(policies * len(constants.prediction_seeds())
                           / settings.HX_PREDICTION_PROCESSES)
        return run_seconds * rounds <= constants.DEADLINE_SECONDS * constants.LIVE_DEADLINE_SHARE

    if fits(len(live)):
        return min(live, key=live.get), "live"
    group = service.close_call(_candidates(shape, live_runs)[0], calibrated, seed_spread)
    if len(group) < 2 or not fits(len(group)):
        return min(calibrated, key=calibrated.get), "calibrated"
    settled = settled_close_call(calibrated, live, group)
    return min(settled, key=settled.get), "settled"


def evaluate(case, cache: Path, pattern: str, notes: bool = True) -> dict | None:
    """The comparison of one case, or None while some of its runs are not cached."""
    shape, n, u, point_runs, live_runs = case
    records = [(t, cached(cache, t)) for t in point_runs + live_runs]
    if any(r is None for _, r in records):
        return None
    found = {t.key: r for t, r in records}
    table = build_table(PointResult(pattern=t.label[1], node_count=t.label[2], load=t.label[3],
                                    policy=t.label[4],
                                    completion_cycles=found[t.key]["completion_cycles"],
                                    seconds=found[t.key].get("cpu_seconds")
                                    or found[t.key]["wall_seconds"])
                        for t in point_runs)
    answer = table.completion_cycles(pattern, n, u)
    from recommendations.services.seeds import seed_rivals

    per_policy: dict[str, dict[int, int | None]] = {}
    for t in live_runs:
        per_policy.setdefault(t.label[-2], {})[t.label[-1]] = found[t.key]["completion_cycles"]
    per_seed = {p: v for p, v in per_policy.items() if None not in v.values()}
    live = {p: sum(v.values()) / len(v) for p, v in per_seed.items()}
    if answer is None or not live:
        return None
    calibrated, coverage = answer
    common = {p: calibrated[p] for p in live if p in calibrated}
    seed_spread = table.seed_spread(pattern, n, u)
    note = portal_notes(shape, n, u, live_runs, calibrated, seed_spread) if notes else "n/a"
    live_best = min(live, key=live.get)
    cal_best = min(common, key=common.get)
    pick, how = portal_answer(shape, live_runs, live, common, seed_spread,
                              table.run_seconds(pattern, n, u) or math.inf)
    errors = [abs(common[p] / live[p] - 1) for p in common]
    rivals = seed_rivals(per_seed)[1] if len(per_seed) > 1 else {}
    return {"shape": shape_label(shape), "size": n, "load": u, "live": live,
            "calibrated": common, "live_best": live_best, "cal_best": cal_best,
            "agree": live_best == cal_best, "tau": kendall_tau(live, common),
            "regret": live[cal_best] / live[live_best] - 1,
            "pick": pick, "how": how, "pick_regret": live[pick] / live[live_best] - 1,
            "spread": max(live.values()) / live[live_best] - 1,
            "error": statistics.median(errors), "coverage": coverage.describe(), "note": note,
            "uncalibrated": sorted(set(live) - set(calibrated)),
            "live_rivals": sorted(rivals), "pick_rival": cal_best in rivals,
            "seconds": sum(found[t.key]["wall_seconds"] for t in point_runs + live_runs)}


def _seeds_column(row: dict) -> str:
    """``-`` when every live seed puts the live best first, else how many policies beat
    it at some seed, ``*`` when the calibrated pick is one of them."""
    if not row["live_rivals"]:
        return "-"
    return f"{len(row['live_rivals'])}{'*' if row['pick_rival'] else ''}"


def report(rows: list[dict], missing: list[str]) -> None:
    print(f"{'machine':<12} {'size':>5} {'load':>5} {'live best':<22} {'calibrated best':<22} "
          f"{'agree':>5} {'tau':>6} {'regret':>7} {'spread':>7} {'cyc err':>7} {'note':<36} "
          f"{'portal answer':<34} {'regret':>7} {'seeds':>7} coverage")
    for r in rows:
        print(f"{r['shape']:<12} {r['size']:>5} {r['load']:>5.0%} {r['live_best']:<22} "
              f"{r['cal_best']:<22} {'yes' if r['agree'] else 'NO':>5} {r['tau']:>6.2f} "
              f"{r['regret']:>7.2%} {r['spread']:>7.1%} {r['error']:>7.1%} {r['note']:<36} "
              f"{r['pick'] + ' (' + r['how'] + ')':<34} {r['pick_regret']:>7.2%} "
              f"{_seeds_column(r):>7} {r['coverage']}")
    print("\nlive/calibrated completion cycles per policy (mean of the seeds run), live order:")
    for r in rows:
        parts = ", ".join(f"{p} {r['live'][p]:.0f}/{r['calibrated'].get(p, float('nan')):.0f}"
                          for p in sorted(r["live"], key=r["live"].get))
        extra = f" (not calibrated: {', '.join(r['uncalibrated'])})" if r["uncalibrated"] else ""
        print(f"  {r['shape']} {r['size']}@{r['load']:.0%}: {parts}{extra}")
    if rows:
        agree = sum(r["agree"] for r in rows)
        near = sum(r["regret"] <= 0.01 for r in rows)
        wrong = [r for r in rows if not r["agree"]]
        taus = [r["tau"] for r in rows if not math.isnan(r["tau"])]
        print(f"\n{len(rows)} cases: top-1 agreement in {agree} ({agree / len(rows):.0%}); "
              f"calibrated choice within 1 % of the live best in {near}; "
              f"Kendall tau median {statistics.median(taus):.2f} "
              f"(min {min(taus):.2f}, max {max(taus):.2f})")
        if wrong:
            regrets = sorted(r["regret"] for r in wrong)
            print(f"when they disagree ({len(wrong)}): regret median "
                  f"{statistics.median(regrets):.2%}, max {regrets[-1]:.2%} "
                  f"(the live spread best..worst in those cases: median "
                  f"{statistics.median(r['spread'] for r in wrong):.1%})")
        noted = [r for r in rows if r["note"] not in ("-", "n/a")]
        if any(r["note"] != "n/a" for r in rows):
            print(f"the portal's caveats fire on {len(noted)} cases, "
                  f"{sum(r['regret'] > 0.01 for r in noted)} of them misses by more than 1 %; "
                  f"misses by more than 1 % without one: "
                  f"{sum(r['regret'] > 0.01 and r['note'] == '-' for r in rows)}; "
                  f"mean regret over all cases {statistics.mean(r['regret'] for r in rows):.2%}")
            for kind in ("whole-switch", "line-sharing", "close-call"):
                fired = [r for r in noted if kind in r["note"].split("+")]
                print(f"  {kind}: on {len(fired)} cases, "
                      f"{sum(r['regret'] > 0.01 for r in fired)} of them misses by more than 1 %")
        hows = {how: sum(r["how"] == how for r in rows) for how in ("live", "settled",
                                                                     "calibrated")}
        print(f"the portal's answer (every policy simulated live where its runs fit the "
              f"deadline, else a close call settled live where its runs fit, else the "
              f"calibration): live {hows['live']}, settled {hows['settled']}, calibrated "
              f"{hows['calibrated']}; within 1 % of the live best in "
              f"{sum(r['pick_regret'] <= 0.01 for r in rows)}, mean regret "
              f"{statistics.mean(r['pick_regret'] for r in rows):.2%}, max "
              f"{max(r['pick_regret'] for r in rows):.2%}")
        split = [r for r in rows if r["live_rivals"]]
        misses = [r for r in rows if r["regret"] > 0.01]
        unsure = ", ".join(f"{r['regret']:.1%}" for r in misses if r["pick_rival"]) or "-"
        print(f"the live seeds disagree on the fastest (some policy beats the live best at "
              f"some seed) in {len(split)} of {len(rows)} cases; of the {len(misses)} "
              f"calibrated misses by more than 1 %, {sum(r['pick_rival'] for r in misses)} "
              f"picked such a policy (regrets {unsure}): against those the live answer is "
              f"no surer")
        print(f"calibrated cycles vs live, per case median |error|: median "
              f"{statistics.median(r['error'] for r in rows):.1%}, "
              f"max {max(r['error'] for r in rows):.1%}")
    for line in missing:
        print(f"not run: {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--pattern", default="all2all")
    parser.add_argument("--cases16", default="512@0.5",
                        help="16x16 c=16 cases as size@load, in the order to run")
    parser.add_argument("--only8", action="store_true", help="the 8x8 matrix only")
    parser.add_argument("--only16", action="store_true", help="the 16x16 cases only")
    parser.add_argument("--seeds16", default="0,1",
                        help="seeds of the 16x16 runs (the portal's are 0,1; 0 halves the cost)")
    parser.add_argument("--seeds8", default="0,1",
                        help="seeds of the 8x8 runs (more than the portal's 0,1: is a coin "
                             "toss between two policies settled by more seeds?)")
    parser.add_argument("--synthetic", choices=("aged", "contiguous", "fragmented"),
                        default="aged",
                        help="the calibration's machine: the portal's (aged by Slurm), the "
                             "portal's before 2026-12-04 (contiguous blocks) or a what-if made "
                             "like the live ones, with another seed")
    parser.add_argument("--prediction-processes", type=int, default=None,
                        help="worker processes the portal's answer may count on for live "
                             "runs (HX_PREDICTION_PROCESSES; default: the setting's)")
    parser.add_argument("--truth-seeds", default=None,
                        help="also judge every answer on the mean of these live seeds (e.g. "
                             "0-7; run them with live_seed_noise.py --policies all)")
    parser.add_argument("--big-first", action="store_true", help="run the 16x16 cases first")
    parser.add_argument("--no-run", action="store_true", help="report what is cached")
    parser.add_argument("--cache", type=Path, default=default_cache_dir())
    args = parser.parse_args()
    setup_django()
    if args.prediction_processes:
        from django.conf import settings

        settings.HX_PREDICTION_PROCESSES = args.prediction_processes
    seeds16 = tuple(int(x) for x in args.seeds16.split(","))
    seeds8 = tuple(int(x) for x in args.seeds8.split(","))
    cases, tasks = plan(args.pattern, args.cases16, args.only8, seeds16,
                        args.big_first, args.only16, seeds8, args.synthetic)
    todo = [t for t in tasks if cached(args.cache, t) is None]
    print(f"# {len(tasks)} simulations, {len(tasks) - len(todo)} cached, {len(todo)} to run "
          f"on {args.processes} processes (load average {os.getloadavg()[0]:.2f})",
          file=sys.stderr)
    start = time.perf_counter()
    if todo and not args.no_run:
        with Pool(args.processes) as pool:
            for i, record in enumerate(pool.imap(run_task, [(args.cache, t) for t in todo],
                                                 chunksize=1), 1):
                print(f"# {i}/{len(todo)} {record['label']} {record['wall_seconds']:.1f} s "
                      f"({time.perf_counter() - start:.0f} s elapsed)", file=sys.stderr)
    rows, missing, judged = [], [], []
    for case in cases:
        row = evaluate(case, args.cache, args.pattern, notes=args.synthetic == "aged")
        if row is None:
            missing.append(f"{shape_label(case[0])} {case[1]} nodes at {case[2]:.0%}")
        else:
            rows.append(row)
            judged.append((case, row))
    print(f"# pattern {args.pattern}; seeds {seeds8} (16x16: {seeds16}); calibration machine "
          f"{args.synthetic}; live occupancy seed "
          f"{LIVE_SEED} (+100 x load + nodes); "
          f"{sum(r['seconds'] for r in rows):.0f} s of simulation in the cases reported")
    report(rows, missing)
    if args.truth_seeds:
        report_truth(judged, args.cache, args.pattern, seed_range(args.truth_seeds))


def seed_range(spec: str) -> tuple[int, ...]:
    """``0-7`` or ``0,1,4``."""
    if "-" in spec:
        low, high = (int(x) for x in spec.split("-"))
        return tuple(range(low, high + 1))
    return tuple(int(x) for x in spec.split(","))


def report_truth(judged: list[tuple], cache: Path, pattern: str, seeds: tuple[int, ...]
                 ) -> None:
    """Each case judged again on the live runs' mean over ``seeds`` (run beforehand, e.g.
    by ``live_seed_noise.py``): the regret there of the calibrated pick, of the portal's
    answer and of the live answer's pick on the portal's two seeds."""
    print(f"\njudged on the mean of live seeds {seeds[0]}..{seeds[-1]} ({len(seeds)} seeds; "
          f"regret = that mean of the pick / the best such mean - 1):")
    print(f"{'machine':<12} {'size':>5} {'load':>5} {'best on all seeds':<22} "
          f"{'calibrated':>10} {'portal':>8} {'two-seed live':>13}")
    found_rows = []
    for (shape, n, u, _, _), row in judged:
        held = live_occupancy(shape, u, LIVE_SEED + int(100 * u) + shape.node_count)
        tasks = live_tasks(shape, pattern, n, held, ONLINE_POLICIES, seeds,
                           ("live", shape_label(shape), n, u))
        records = [(t, cached(cache, t)) for t in tasks]
        if any(r is None or r.get("completion_cycles") is None for _, r in records):
            print(f"{row['shape']:<12} {n:>5} {u:>5.0%} not every seed is cached")
            continue
        per: dict[str, list[int]] = {}
        for t, r in records:
            per.setdefault(t.label[-2], []).append(r["completion_cycles"])
        mean = {p: sum(v) / len(v) for p, v in per.items()}
        best = min(mean, key=mean.get)
        cost = {k: mean[row[key]] / mean[best] - 1
                for k, key in (("calibrated", "cal_best"), ("portal", "pick"),
                               ("live", "live_best"))}
        found_rows.append(cost)
        print(f"{row['shape']:<12} {n:>5} {u:>5.0%} {best:<22} {cost['calibrated']:>10.2%} "
              f"{cost['portal']:>8.2%} {cost['live']:>13.2%}")
    if found_rows:
        for k, name in (("calibrated", "the calibrated pick"), ("portal", "the portal's answer"),
                        ("live", "the two-seed live pick")):
            costs = [c[k] for c in found_rows]
            print(f"  {name}: within 1 % in {sum(c <= 0.01 for c in costs)} of "
                  f"{len(costs)}, mean regret {statistics.mean(costs):.2%}, max {max(costs):.2%}")


if __name__ == "__main__":
    main()
