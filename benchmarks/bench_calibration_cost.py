"""What a calibration costs per machine shape, and how its wall time falls with workers.

For 8x8 c=8, 16x16 c=16 and 16x16x16 c=16 (65,536 nodes) the script counts the
default grid's runs (``default_grid`` / ``grid_points``: patterns x loads x sizes x
policies x seeds), then prices them with a cost model fitted on measured runs:

    seconds of one run = cycles x (b_pattern x ranks^k_pattern + a_shape x held) [+ setup]

* cycles: how long the run simulates (its completion); ranks: the job's; held: the
  synthetic occupancy's endpoints, which send background traffic;
* b, k per pattern: from full runs on the empty 8x8 (one policy and seed per size;
  the per-cycle work of a kernel grows with its ranks, the all-to-all's faster than
  linearly as each rank cycles through its peers);
* a per shape: the background's seconds per held endpoint and cycle, from the shape's
  loaded runs (8x8: one per pattern at sizes 16 and 64, loads 0 and 50 %, and the
  all-to-all points of ``calibration_agreement.py``; 16x16: the all-to-all points at
  50 % load that ``calibration_agreement.py`` ran, when cached);
* 65,536 nodes: truncated runs (``max_cycles``) of a 16-rank point on the idle and on
  the half-full machine, two lengths each: the difference in seconds over the
  difference in cycles gives the per-cycle cost without setup, the idle one the
  machine's own per-cycle cost, the loaded one ``a`` there; and the full runs of its
  loaded points kept in ``docs/evidence/long_runs.json`` (an hour or more each, made
  by ``pool_growth.py --keep``), whose cycles come before any smaller shape's and
  whose ``a`` replaces the truncated runs' (those time the first cycles, while the
  network fills, and a cycle costs more as the packets in flight grow: about a
  quarter more over a whole run);
* cycles of points not measured: those measured for the same pattern and load at the
  nearest size (largest shape first), times the ratio of the kernel's packets per rank
  at the two sizes: completion is volume-bound, every kernel moves about the study's
  16,384 phits per rank up to 1,024 ranks, and the all-to-all past that one packet per
  peer (twice the volume at 2,048 ranks, four times at 4,096).

Then: total CPU time per shape, and for the 65,536-node machine the wall time
against worker processes by list scheduling (longest run first) of the estimated run
times; 1 and 2 processes are also measured on a small 8x8 subset (uncached runs).
Calibration runs are independent simulations (points, policies, seeds) spread over
Celery workers: the parallelism is across runs, not within one (no domain
decomposition), so the wall time never falls below the longest single run.

Usage: .venv/bin/python benchmarks/bench_calibration_cost.py [--processes 2]
       [--no-run] [--keep-speedup] [--speedup-runs 8] [--cache DIR] [--long-runs FILE]
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from multiprocessing import Pool
from pathlib import Path

import numpy as np
from _calibration_runs import (
    LONG_RUNS,
    Task,
    cached,
    default_cache_dir,
    engine_config,
    long_runs,
    point_task,
    run_task,
    setup_django,
    shape_label,
)

from allocation.hyperx import MachineShape
from recommendations.calibration import default_grid, grid_points, synthetic_occupancy
from recommendations.calibration.grid import CalibrationPoint, held_count

SHAPES = (MachineShape((8, 8), 8), MachineShape((16, 16), 16), MachineShape((16, 16, 16), 16))
BIG = SHAPES[2]
#: Truncation lengths of the 65,536-node measurements (cycles).
SHORT, LONG = 300, 900
#: The 8x8 classes sampled per pattern (one policy, one seed each; CPU is scarce).
SAMPLE_SIZES, SAMPLE_LOADS = (16, 64), (0.0, 0.5)
PROCESSES = (1, 2, 8, 16, 64, 256)
#: The portal's default per-run memory limit, and the one this benchmark runs with.
DEFAULT_MAX_BYTES = 1 << 30
MEASURE_MAX_BYTES = 16 << 30


def point_busy(shape: MachineShape, point: CalibrationPoint) -> tuple[int, int]:
    """(busy endpoints, the bytes the portal's limit checks before the run: its
    arrays with the packet pool at its first size) of a point."""
    from simulation.engine import SimConfig
    from simulation.engine.memory import estimate_memory

    held = held_count(shape, point.load)
    config = engine_config(shape, point.pattern, point.node_count, point.policy, point.seed,
                           held >= 2)
    return (config["ranks"] + (held if held >= 2 else 0),
            estimate_memory(SimConfig.from_dict(config)).floor)


def sample_tasks() -> tuple[list[Task], list[Task]]:
    """(full runs on 8x8: one per class; truncated runs on 16x16x16)."""
    small = SHAPES[0]
    grid = default_grid(small, sizes=SAMPLE_SIZES, loads=SAMPLE_LOADS)
    held = {u: synthetic_occupancy(small, u) for u in grid.loads}
    full = []
    for p in grid_points(grid, small):
        if p.policy == "diagonal" and p.seed == 0:
            if (t := point_task(small, p, held[p.load])) is not None:
                full.append(t)
    truncated = []
    for load, lengths in ((0.0, (SHORT * 5, LONG * 5)), (0.5, (SHORT, LONG))):
        occupancy = synthetic_occupancy(BIG, load)
        base = point_task(BIG, CalibrationPoint("all2all", 16, load, "diagonal", 0), occupancy)
        for cycles in lengths:
            truncated.append(replace(base, label=("truncated", shape_label(BIG), 16, load, cycles),
                                     config={**base.config, "max_cycles": cycles}))
    return full, truncated


def run(tasks: list[Task], cache: Path, processes: int, fresh: bool = False) -> list[dict]:
    """Each task's record, simulating the ones not cached (``fresh``: a new process per
    run, so its peak memory is its own)."""
    todo = [t for t in tasks if cached(cache, t) is None]
    if todo:
        print(f"# running {len(todo)} of {len(tasks)} on {processes} processes (load "
              f"{os.getloadavg()[0]:.2f})", file=sys.stderr)
        with Pool(processes, maxtasksperchild=1 if fresh else None) as pool:
            for record in pool.imap(run_task, [(cache, t) for t in todo], chunksize=1):
                print(f"# {record['label']} {record['wall_seconds']:.1f} s", file=sys.stderr)
    return [cached(cache, t) for t in tasks]


def speedup(processes: int, count: int) -> list[tuple[int, float, float]]:
    """(processes, wall seconds, load before) of ``count`` uncached 8x8 runs on 1, .., P."""
    from simulation.engine import warm_up

    small = SHAPES[0]
    held = synthetic_occupancy(small, 0.5)
    points = [p for p in grid_points(default_grid(small, patterns=("all2all", "stencil4"),
                                                  loads=(0.5,), seeds=(7,)), small)
              if p.node_count == 64][:count]
    tasks = [t for p in points if (t := point_task(small, p, held)) is not None]
    out = []
    for p in sorted({1, processes}):
        with tempfile.TemporaryDirectory() as tmp, Pool(p, initializer=warm_up) as pool:
            pool.map(abs, range(p))  # workers started and warmed before the clock
            load = os.getloadavg()[0]
            start = time.perf_counter()
            pool.map(run_task, [(Path(tmp), t) for t in tasks], chunksize=1)
            out.append((p, time.perf_counter() - start, load))
    return out


def schedule(seconds: list[float], processes: int) -> float:
    """Makespan of longest-first list scheduling on ``processes`` workers."""
    workers = [0.0] * min(processes, len(seconds))
    heapq.heapify(workers)
    for s in sorted(seconds, reverse=True):
        heapq.heappush(workers, heapq.heappop(workers) + s)
    return max(workers)


def fifo_ends(seconds: list[float], processes: int) -> list[float]:
    """End time of each run when ``processes`` workers take them in the given order (a
    Celery queue fed in calibration order: patterns one after another)."""
    workers = [0.0] * processes
    heapq.heapify(workers)
    ends = []
    for s in seconds:
        end = heapq.heappop(workers) + s
        ends.append(end)
        heapq.heappush(workers, end)
    return ends


def hms(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--speedup-runs", type=int, default=8)
    parser.add_argument("--no-run", action="store_true", help="use cached runs only")
    parser.add_argument("--keep-speedup", action="store_true",
                        help="do not measure 1 vs 2 processes again (report the cached one)")
    parser.add_argument("--cache", type=Path, default=default_cache_dir())
    parser.add_argument("--long-runs", type=Path, default=LONG_RUNS,
                        help="kept runs too long to repeat (benchmarks/pool_growth.py --keep)")
    args = parser.parse_args()
    # The portal's per-run memory limit (HX_SIM_MAX_BYTES, 1 GiB by default) refuses no
    # 65,536-node point before it runs (0.45 GiB at most); raised here all the same, so
    # that no truncated run here stops on a pool that grows.
    os.environ.setdefault("HX_SIM_MAX_BYTES", str(MEASURE_MAX_BYTES))
    setup_django()
    from simulation.engine import ENGINE_VERSION

    full, truncated = sample_tasks()
    speedup_file = args.cache / "speedup.json"
    measured_speedup = (json.loads(speedup_file.read_text()) if speedup_file.exists()
                        else [])
    if not args.no_run and not (args.keep_speedup and measured_speedup):
        measured_speedup = speedup(args.processes, args.speedup_runs)
        args.cache.mkdir(parents=True, exist_ok=True)
        speedup_file.write_text(json.dumps(measured_speedup))
        run(full, args.cache, args.processes)
        run(truncated, args.cache, min(args.processes, 2), fresh=True)
    trunc_rec = [cached(args.cache, t) for t in truncated]
    kept = [r for r in long_runs(args.long_runs, ENGINE_VERSION) if r["completed"]]
    records = point_records(args.cache) + kept
    print(f"# engine {ENGINE_VERSION}; load average at report {os.getloadavg()[0]:.2f}; "
          f"{len(records)} measured calibration-point runs ({len(kept)} of them kept in "
          f"{args.long_runs.name}: {', '.join(_point_text(r) for r in kept) or 'none'})")
    model = fit(records, trunc_rec)
    print_fit(model, records)
    both = [r["cpu_seconds"] / r["wall_seconds"] for r in records if r.get("cpu_seconds")]
    if both:
        print(f"\nthe host is shared: of the {len(both)} runs that recorded both, CPU seconds / "
              f"wall seconds median {statistics.median(both):.2f} (min {min(both):.2f}, max "
              f"{max(both):.2f}): the share of a core each run got")
    estimates = print_grids(model)
    if measured_speedup:
        base = measured_speedup[0][1]
        print("\nmeasured on the same uncached 8x8 runs (64 nodes, 50 % load, all2all and "
              "stencil4; the last measurement, kept in the cache):")
        for p, wall, load in measured_speedup:
            print(f"  {p} process(es): {wall:.1f} s wall, speed-up {base / wall:.2f} "
                  f"(load average before: {load:.2f})")
    seconds = estimates[BIG.node_count]
    print(f"\n{_label(BIG.node_count)}: wall time of its calibration against worker "
          f"processes (list scheduling, longest first, of the {len(seconds)} estimated runs)")
    for p in PROCESSES:
        wall = schedule(seconds, p)
        print(f"  {p:>4} processes: {hms(wall):>8}  (efficiency "
              f"{sum(seconds) / (p * wall):.0%})")
    print(f"  floor (any number of processes): the longest single run, {hms(max(seconds))}")


def point_records(cache: Path) -> list[dict]:
    """Every cached, completed calibration-point run (``calibration_agreement.py``'s too)."""
    records = []
    for path in cache.glob("*.json"):
        record = json.loads(path.read_text())
        if (isinstance(record, dict) and record["label"][0] == "point"
                and record["completed"] and record.get("nodes")):
            records.append(record)
    return records


def _held(record: dict) -> int:
    return record["busy_endpoints"] - record["ranks"]


def _seconds(record: dict) -> float:
    """The run's CPU seconds when it recorded them, else its wall seconds (the host is
    shared: wall time counts the other processes' share of the cores too)."""
    return record.get("cpu_seconds") or record["wall_seconds"]


def _per_cycle(record: dict) -> float:
    return _seconds(record) / record["cycles"]


def fit(records: list[dict], truncated: list[dict | None]) -> dict:
    """The cost model's coefficients (see the module docstring):

    * per pattern, from 8x8 runs on the empty machine: seconds per cycle = b * ranks^k
      (least squares in log-log: a kernel's per-cycle work grows with its ranks and,
      for the all-to-all, with the peers each rank cycles through);
    * per shape, the background's seconds per held endpoint and cycle ``a`` (median
      over the shape's loaded runs of (per-cycle - b * ranks^k) / held);
    * 65,536 nodes: the truncated runs' per-cycle difference gives the idle machine's
      per-cycle cost and ``a`` there.
    """
    small = SHAPES[0].node_count
    pattern_fit: dict[str, tuple[float, float]] = {}
    by_pattern: dict[str, list[dict]] = {}
    for r in records:
        if r["nodes"] == small and _held(r) == 0:
            by_pattern.setdefault(r["label"][1], []).append(r)
    for pattern, rs in by_pattern.items():
        xs = np.log([r["ranks"] for r in rs])
        ys = np.log([_per_cycle(r) for r in rs])
        if len(set(xs)) >= 2:
            k, logb = np.polyfit(xs, ys, 1)
        else:
            k, logb = 1.0, float(np.mean(ys - xs))
        pattern_fit[pattern] = (float(math.exp(logb)), float(k))
    background: dict[int, float] = {}
    for nodes in sorted({r["nodes"] for r in records}):
        loaded = [r for r in records if r["nodes"] == nodes and _held(r) > 0
                  and r["label"][1] in pattern_fit]
        if loaded:
            background[nodes] = max(0.0, statistics.median(
                (_per_cycle(r) - _kernel(pattern_fit, r["label"][1], r["ranks"])) / _held(r)
                for r in loaded))
    cycles_seen: dict[tuple[str, float], list[tuple[int, int, float]]] = {}
    for r in records:
        cycles_seen.setdefault((r["label"][1], float(r["label"][3])), []).append(
            (r["nodes"], int(r["label"][2]), float(r["cycles"])))
    big = _big_model(truncated, pattern_fit)
    if big and BIG.node_count in background:
        # The truncated runs time the first cycles, while the background still fills
        # the network: a cycle costs more as the packets in flight grow (a full run at
        # 50 % load: 30 s per 1,000 cycles at the start, 39 s at the end). Full runs of
        # the shape, when kept, give the cost over a whole run.
        big["a_start"], big["a"] = big["a"], background[BIG.node_count]
    return {"pattern": pattern_fit, "background": background, "cycles": cycles_seen,
            "big": big}


def _kernel(pattern_fit: dict, pattern: str, ranks: int) -> float:
    b, k = pattern_fit.get(pattern) or pattern_fit["all2all"]
    return b * ranks ** k


def predicted_seconds(model: dict, nodes: int, pattern: str, ranks: int, held: int,
                      cycles: float) -> float:
    big = model["big"]
    if nodes == BIG.node_count and big:
        per_cycle = (big["idle"] + _kernel(model["pattern"], pattern, ranks)
                     - _kernel(model["pattern"], "all2all", 16) + big["a"] * held)
        return big["setup"] + cycles * per_cycle
    measured = model["background"]
    a = measured.get(nodes)
    if a is None:  # not measured on this shape: the largest smaller shape's (0: none yet)
        smaller = [n for n in measured if n < nodes]
        a = measured[max(smaller)] if smaller else 0.0
    return cycles * (_kernel(model["pattern"], pattern, ranks) + a * held)


def print_fit(model: dict, records: list[dict]) -> None:
    print("\nper-cycle cost of a kernel on the empty 8x8 (seconds per cycle = b x ranks^k):")
    for pattern, (b, k) in sorted(model["pattern"].items()):
        print(f"  {pattern:<18} b = {b:.3g} s, k = {k:.2f}")
    print("background cost per held endpoint and cycle (median of the shape's loaded runs):")
    for nodes, a in model["background"].items():
        print(f"  {_label(nodes):<16} {a * 1e9:.0f} ns")
    print(f"\n{'shape':<16} {'runs':>5} {'meas. s':>8} {'model s':>8} {'median |err|':>12} "
          f"{'worst':>7} {'load avg':>8} {'CPU s':>6}   (model on the measured runs, their "
          "own cycles; seconds: CPU for the 'CPU s' runs that recorded it, else wall)")
    for nodes in sorted({r["nodes"] for r in records}):
        rs = [r for r in records if r["nodes"] == nodes]
        pred = [predicted_seconds(model, nodes, r["label"][1], r["ranks"], _held(r),
                                  r["cycles"]) for r in rs]
        errs = [abs(p / _seconds(r) - 1) for p, r in zip(pred, rs, strict=True)]
        cpu = sum(bool(r.get("cpu_seconds")) for r in rs)
        loads = [r["load_average"] for r in rs if r.get("load_average") is not None]
        load = f"{statistics.mean(loads):.2f}" if loads else "n/a"
        print(f"{_label(nodes):<16} {len(rs):>5} {sum(_seconds(r) for r in rs):>8.0f} "
              f"{sum(pred):>8.0f} {statistics.median(errs):>12.0%} {max(errs):>7.0%} "
              f"{load:>8} {cpu:>6}")
    big = model["big"]
    if big:
        print(f"\n{_label(BIG.node_count)} truncated runs (all2all, 16 ranks, diagonal):")
        for line in big["lines"]:
            print(f"  {line}")
        if "a_start" in big:
            print(f"  -> per cycle {big['idle'] * 1e3:.2f} ms on the idle machine (16 ranks), "
                  f"setup {big['setup']:.1f} s; background {big['a_start'] * 1e9:.0f} ns per "
                  f"held endpoint and cycle over these first cycles, while the network "
                  f"fills; the model takes the full runs' {big['a'] * 1e9:.0f} ns")
        else:
            print(f"  -> per cycle {big['idle'] * 1e3:.2f} ms on the idle machine (16 ranks), "
                  f"background {big['a'] * 1e9:.0f} ns per held endpoint and cycle, setup "
                  f"{big['setup']:.1f} s")


def print_grids(model: dict) -> dict[int, list[float]]:
    """The default grid of each shape priced by the model; the estimates by shape."""
    print("\ndefault grid per shape (6 patterns x loads 0/50/75 % x sizes x 8 policies x 2 "
          "seeds; a size is left out at a load where it does not fit)")
    print(f"{'shape':<16} {'nodes':>6} {'sizes':<24} {'runs':>5} {'CPU total':>10} "
          f"{'longest run':>12} {'mean run':>9} {'> 1 GiB':>8} {'max mem':>8}")
    estimates: dict[int, list[float]] = {}
    order: dict[int, list[str]] = {}
    for shape in SHAPES:
        grid = default_grid(shape)
        seconds, memory = [], []
        points = grid_points(grid, shape)
        order[shape.node_count] = [p.pattern for p in points]
        for p in points:
            busy, nbytes = point_busy(shape, p)
            held = held_count(shape, p.load)
            held = held if held >= 2 else 0
            seconds.append(predicted_seconds(model, shape.node_count, p.pattern, busy - held,
                                             held, _cycles(model["cycles"], p)))
            memory.append(nbytes)
        estimates[shape.node_count] = seconds
        print(f"{shape_label(shape):<16} {shape.node_count:>6} "
              f"{','.join(map(str, grid.sizes)):<24} {len(seconds):>5} "
              f"{hms(sum(seconds)):>10} {hms(max(seconds)):>12} "
              f"{hms(statistics.mean(seconds)):>9} "
              f"{sum(m > DEFAULT_MAX_BYTES for m in memory):>8} "
              f"{max(memory) / 2**30:>6.1f} G")
    print("\nuntil each pattern is fully calibrated (runs queued in calibration order, "
          "FIFO over P workers; before a pattern's first run ends its answers are "
          "analytic, after it calibrated from the points done):")
    for shape in SHAPES:
        patterns = list(dict.fromkeys(order[shape.node_count]))
        for p in (2, 8, 64):
            ends = fifo_ends(estimates[shape.node_count], p)
            done = {pat: max(e for e, q in zip(ends, order[shape.node_count], strict=True)
                             if q == pat) for pat in patterns}
            first = {pat: min(e for e, q in zip(ends, order[shape.node_count], strict=True)
                              if q == pat) for pat in patterns}
            print(f"  {shape_label(shape):<15} P={p:<3} " + ", ".join(
                f"{pat} {hms(first[pat])}..{hms(done[pat])}" for pat in patterns))
    return estimates


def _label(nodes: int) -> str:
    return next((shape_label(s) for s in SHAPES if s.node_count == nodes), f"{nodes} nodes")


def _cycles(seen: dict, point: CalibrationPoint) -> float:
    """Measured cycles of the same pattern and load, nearest size, largest shape first
    (else the same pattern at any load, else the all-to-all's), scaled by the kernel's
    packets per rank at the two sizes: a run is volume-bound, and past 1,024 ranks the
    all-to-all sends one packet to every peer (four times the study's volume at 4,096)."""
    same = [v for (pat, _), vs in seen.items() if pat == point.pattern for v in vs]
    options = seen.get((point.pattern, point.load)) or same or [
        v for (pat, _), vs in seen.items() if pat == "all2all" for v in vs]
    best = min(options, key=lambda o: (abs(math.log2(o[1]) - math.log2(point.node_count)),
                                       -o[0]))
    if not same:
        return best[2]
    return best[2] * _packets(point.pattern, point.node_count) / _packets(point.pattern, best[1])


def _packets(pattern: str, size: int) -> int:
    """Packets a rank of ``pattern`` sends on a job of ``size`` nodes (1: open loop, whose
    runs send a fixed amount per task)."""
    from simulation.services import study_packets_per_rank, usable_ranks

    return study_packets_per_rank(pattern, max(usable_ranks(pattern, size), 2)) or 1


def _point_text(record: dict) -> str:
    _, pattern, size, load, policy, seed = record["label"]
    return (f"{_label(record['nodes'])} {pattern} of {size} at {load:.0%} on {policy} seed "
            f"{seed}, {record['cycles']:,} cycles")


def _cpu_text(record: dict) -> str:
    cpu = record.get("cpu_seconds")
    return f"{cpu:.1f} s" if cpu else "n/a"


def _big_model(records: list[dict | None], pattern_fit: dict) -> dict | None:
    """Idle per-cycle cost, background cost and setup from the truncated big runs."""
    if not records or any(r is None for r in records):
        return None
    idle_short, idle_long, loaded_short, loaded_long = records
    lines = [f"{r['busy_endpoints']:>6} busy endpoints, {r['cycles']:>5} cycles: "
             f"{r['wall_seconds']:.1f} s wall, "
             f"{_cpu_text(r)} CPU, "
             f"peak RSS {r.get('max_rss_mib', 0):.0f} MiB "
             f"(load average {r['load_average']:.2f})" for r in records]
    # at least 0: on a fast host the two idle lengths can time the same, and noise
    # would otherwise make the idle machine's cost per cycle negative
    idle = max((_seconds(idle_long) - _seconds(idle_short))
               / (idle_long["cycles"] - idle_short["cycles"]), 0.0)
    loaded = ((_seconds(loaded_long) - _seconds(loaded_short))
              / (loaded_long["cycles"] - loaded_short["cycles"]))
    setup = max(_seconds(loaded_short) - loaded * loaded_short["cycles"], 0.0)
    return {"lines": lines, "idle": idle, "a": max(loaded - idle, 0.0) / _held(loaded_long),
            "setup": setup}


if __name__ == "__main__":
    main()
