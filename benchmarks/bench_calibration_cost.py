"""What a calibration costs per machine shape, and how its wall time falls with workers.

For 8x8 c=8, 16x16 c=16 and 16x16x16 c=16 (65,536 nodes) the script counts the
default grid's runs (``default_grid`` / ``grid_points``: patterns x loads x sizes x
policies x seeds), then prices them with a cost model fitted on measured runs:

    seconds of one run = cycles x (busy endpoints / rate + ports / port_rate) + setup

* busy endpoints: the job's ranks plus the synthetic occupancy's held endpoints (the
  background traffic); cycles: how long the run simulates (its completion);
* rate (endpoint-cycles per second) is fitted per shape on full runs of calibration
  points (8x8: one policy and seed per (pattern, size, load) class, plus the
  all-to-all points of ``calibration_agreement.py`` when cached; 16x16: the
  all-to-all points at 50 % load that ``calibration_agreement.py`` ran);
* on 16x16x16 no full run is made: two truncated runs (``max_cycles``) of the same
  point differ only by cycles, so their difference gives the per-cycle cost (and the
  shorter one the setup); a point with 16 busy endpoints on the idle machine gives
  the per-port cost of the network itself (``port_rate``);
* cycles of points not measured: the cycles measured for the same pattern and load
  at the nearest size (any shape, largest first): every kernel moves the study's
  16,384 phits per rank, so completion is volume-bound and nearly size-independent.

Then: total CPU time per shape, and for the 65,536-node machine the wall time
against worker processes by list scheduling (longest run first) of the estimated run
times; 1 and 2 processes are also measured on a small 8x8 subset (uncached runs).
Calibration runs are independent simulations (points, policies, seeds) spread over
Celery workers: the parallelism is across runs, not within one (no domain
decomposition), so the wall time never falls below the longest single run.

Usage: .venv/bin/python benchmarks/bench_calibration_cost.py [--processes 2]
       [--no-run] [--skip-big] [--speedup-runs 12]
"""

from __future__ import annotations

import argparse
import heapq
import math
import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from multiprocessing import Pool
from pathlib import Path

from _calibration_runs import (
    Task,
    cached,
    default_cache_dir,
    engine_config,
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
SHORT, LONG = 400, 1200
PROCESSES = (1, 2, 8, 16, 64, 256)
#: The portal's default per-run memory limit, and the one this benchmark runs with.
DEFAULT_MAX_BYTES = 1 << 30
MEASURE_MAX_BYTES = 16 << 30


def ports(shape: MachineShape) -> int:
    switches = math.prod(shape.sides)
    return switches * (shape.concentration + sum(s - 1 for s in shape.sides))


def point_busy(shape: MachineShape, point: CalibrationPoint) -> tuple[int, int]:
    """(busy endpoints, the engine's memory estimate in bytes) of a point."""
    from simulation.engine import SimConfig
    from simulation.engine.memory import estimate_memory

    held = held_count(shape, point.load)
    config = engine_config(shape, point.pattern, point.node_count, point.policy, point.seed,
                           held >= 2)
    return (config["ranks"] + (held if held >= 2 else 0),
            estimate_memory(SimConfig.from_dict(config)).total)


def sample_tasks(cache: Path) -> tuple[list[Task], list[Task]]:
    """(full runs on 8x8: one per class; truncated runs on 16x16x16)."""
    small = SHAPES[0]
    grid = default_grid(small)
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


def agreement_records(cache: Path) -> list[dict]:
    """Every cached calibration-point run (``calibration_agreement.py``'s too)."""
    import json

    records = []
    for path in cache.glob("*.json"):
        record = json.loads(path.read_text())
        if record["label"][0] == "point" and record["completed"]:
            records.append(record)
    return records


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
    parser.add_argument("--speedup-runs", type=int, default=12)
    parser.add_argument("--no-run", action="store_true", help="use cached runs only")
    parser.add_argument("--cache", type=Path, default=default_cache_dir())
    args = parser.parse_args()
    # The portal's per-run memory limit (HX_SIM_MAX_BYTES, 1 GiB by default) rejects
    # most 65,536-node points; raised here to measure them (see the grid table).
    os.environ.setdefault("HX_SIM_MAX_BYTES", str(MEASURE_MAX_BYTES))
    setup_django()
    from simulation.engine import ENGINE_VERSION

    full, truncated = sample_tasks(args.cache)
    if args.no_run:
        full_rec = [cached(args.cache, t) for t in full]
        trunc_rec = [cached(args.cache, t) for t in truncated]
        measured_speedup = []
    else:
        measured_speedup = speedup(args.processes, args.speedup_runs)
        full_rec = run(full, args.cache, args.processes)
        trunc_rec = run(truncated, args.cache, min(args.processes, 2), fresh=True)
    # --- measured runs by shape (rate fits) and cycles by (pattern, load, size)
    by_shape: dict[str, list[dict]] = {}
    cycles_seen: dict[tuple[str, float], list[tuple[int, int, float]]] = {}
    for record in agreement_records(args.cache):
        _, pattern, size, load, _, _ = record["label"]
        nodes = _nodes_of(record)
        by_shape.setdefault(nodes, []).append(record)
        cycles_seen.setdefault((pattern, float(load)), []).append(
            (nodes, int(size), float(record["cycles"])))
    print(f"# engine {ENGINE_VERSION}; load average at report {os.getloadavg()[0]:.2f}")
    print("\nmeasured full runs (calibration points) per shape:")
    print(f"{'shape':<16} {'runs':>5} {'CPU s':>8} {'rate (endpoint-cycles/s)':>25} "
          f"{'min':>8} {'max':>8} {'load avg':>8}")
    rates: dict[int, float] = {}
    for nodes, records in sorted(by_shape.items()):
        work = sum(r["busy_endpoints"] * r["cycles"] for r in records)
        wall = sum(r["wall_seconds"] for r in records)
        each = [r["busy_endpoints"] * r["cycles"] / r["wall_seconds"] for r in records]
        rates[nodes] = work / wall
        print(f"{_label(nodes):<16} {len(records):>5} {wall:>8.0f} {rates[nodes]:>25.3g} "
              f"{min(each):>8.3g} {max(each):>8.3g} "
              f"{statistics.mean(r['load_average'] for r in records):>8.2f}")
    big = _big_model(trunc_rec)
    if big:
        print(f"\n{_label(BIG.node_count)} truncated runs (all2all, 16 ranks, diagonal):")
        for line in big["lines"]:
            print(f"  {line}")
        print(f"  -> per cycle: {big['per_cycle_loaded'] * 1e3:.1f} ms with "
              f"{big['busy_loaded']} busy endpoints, {big['per_cycle_idle'] * 1e3:.2f} ms with "
              f"{big['busy_idle']}; rate {big['rate']:.3g} endpoint-cycles/s, port cost "
              f"{big['port_seconds'] * 1e9:.1f} ns per port-cycle, setup {big['setup']:.1f} s")
    # --- the model over each shape's default grid
    print("\ndefault grid per shape (6 patterns x loads 0/50/75 % x sizes x 8 policies x 2 seeds)")
    print(f"{'shape':<16} {'nodes':>6} {'sizes':<24} {'runs':>5} {'rate used':>10} "
          f"{'CPU total':>10} {'longest run':>12} {'mean run':>9} {'> 1 GiB':>8} "
          f"{'max mem':>8}")
    estimates: dict[int, list[float]] = {}
    for shape in SHAPES:
        grid = default_grid(shape)
        points = grid_points(grid, shape)
        rate = rates.get(shape.node_count) or (big["rate"] if big and shape == BIG else None)
        if rate is None:  # no measurement on this shape: the nearest smaller one's
            rate = rates[max(n for n in rates if n < shape.node_count)]
        port_cost = big["port_seconds"] if big else 0.0
        setup = big["setup"] if big and shape == BIG else 0.0
        seconds, memory = [], []
        for p in points:
            cycles = _cycles(cycles_seen, p, shape.node_count)
            busy, nbytes = point_busy(shape, p)
            seconds.append(cycles * (busy / rate + ports(shape) * port_cost) + setup)
            memory.append(nbytes)
        estimates[shape.node_count] = seconds
        print(f"{shape_label(shape):<16} {shape.node_count:>6} "
              f"{','.join(map(str, grid.sizes)):<24} {len(points):>5} {rate:>10.3g} "
              f"{hms(sum(seconds)):>10} {hms(max(seconds)):>12} "
              f"{hms(statistics.mean(seconds)):>9} "
              f"{sum(m > DEFAULT_MAX_BYTES for m in memory):>8} "
              f"{max(memory) / 2**30:>6.1f} G")
    check = [r for r in by_shape.get(SHAPES[0].node_count, [])]
    if check:
        predicted = sum(r["cycles"] * (r["busy_endpoints"] / rates[SHAPES[0].node_count]
                                       + ports(SHAPES[0]) * (big["port_seconds"] if big
                                                             else 0.0)) for r in check)
        print(f"\nmodel check on the {len(check)} measured 8x8 runs: {predicted:.0f} s "
              f"predicted (with their measured cycles), "
              f"{sum(r['wall_seconds'] for r in check):.0f} s measured")
    if measured_speedup:
        base = measured_speedup[0][1]
        print(f"\nmeasured on {args.speedup_runs} uncached 8x8 runs (64 nodes, 50 % load):")
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


def _nodes_of(record: dict) -> int:
    """The machine size of a cached point run (its config is not stored: the busy
    endpoints less the held ones tell the load; the shape comes from the task)."""
    return int(record.get("nodes") or 0)


def _label(nodes: int) -> str:
    return next((shape_label(s) for s in SHAPES if s.node_count == nodes), f"{nodes} nodes")


def _cycles(seen: dict, point: CalibrationPoint, nodes: int) -> float:
    """Measured cycles of the same pattern and load, nearest size, largest shape first
    (else the same pattern at any load, else the all-to-all's)."""
    options = seen.get((point.pattern, point.load)) or [
        v for (pat, _), vs in seen.items() if pat == point.pattern for v in vs] or [
        v for (pat, _), vs in seen.items() if pat == "all2all" for v in vs]
    best = min(options, key=lambda o: (abs(math.log2(o[1]) - math.log2(point.node_count)),
                                       -o[0]))
    return best[2]


def _big_model(records: list[dict | None]) -> dict | None:
    """Per-cycle cost, rate, per-port cost and setup from the truncated big runs."""
    if any(r is None for r in records) or not records:
        return None
    idle_short, idle_long, loaded_short, loaded_long = records
    lines = [f"{r['busy_endpoints']:>6} busy endpoints, {r['cycles']:>5} cycles: "
             f"{r['wall_seconds']:.1f} s, peak RSS {r.get('max_rss_mib', 0):.0f} MiB "
             f"(load average {r['load_average']:.2f})"
             for r in records]
    per_idle = ((idle_long["wall_seconds"] - idle_short["wall_seconds"])
                / (idle_long["cycles"] - idle_short["cycles"]))
    per_loaded = ((loaded_long["wall_seconds"] - loaded_short["wall_seconds"])
                  / (loaded_long["cycles"] - loaded_short["cycles"]))
    port_seconds = max(per_idle, 0.0) / ports(BIG)
    busy = loaded_long["busy_endpoints"]
    rate = busy / max(per_loaded - port_seconds * ports(BIG), 1e-12)
    setup = max(loaded_short["wall_seconds"] - per_loaded * loaded_short["cycles"], 0.0)
    return {"lines": lines, "per_cycle_idle": per_idle, "per_cycle_loaded": per_loaded,
            "busy_idle": idle_long["busy_endpoints"], "busy_loaded": busy, "rate": rate,
            "port_seconds": port_seconds, "setup": setup}


if __name__ == "__main__":
    main()
