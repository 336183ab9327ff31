"""What a checkpoint of a long calibration run costs, and that resuming from it changes
nothing, on the machine shape whose runs need it.

A 65,536-node calibration point at 75 % load runs for hours, longer than one task's
time limit: the worker saves its state every ``HX_SIM_CHECKPOINT_SECONDS`` and after
``HX_SIM_SLICE_SECONDS`` continues in a new task from the save
(``simulation.services.checkpoints``). This runs one such point (the portal's own
configuration and synthetic occupancy, as ``pool_growth.py``) to ``--cycles``, saving
its state at the first chunk's end past ``--save-at`` through the services' writer;
then reads the file back and runs the same point from it to the same cycle. It prints
the state's size, the seconds to write and to read it, the seconds to build the run
from scratch against building it and restoring the save, the run's seconds per 1,000
cycles, what one save costs at the default interval as a share of the time between
saves, and whether the resumed run's result is the uninterrupted run's (it must be).

Then the hand-over of a stopping worker (``hxportal.handover``): the point runs from
the save once more, and ``--handovers`` times a stop is asked at a random moment; the
run saves after the chunk it is in and stops (``Suspended``), and is resumed from
that save. It prints how long each hand-over took from the request (the rest of the
chunk, the capture and the write: what ``HX_WORKER_SHUTDOWN_GRACE`` must cover) and
whether the run, stopped and resumed that many times, still ends as the
uninterrupted one.

Usage: .venv/bin/python benchmarks/bench_checkpoint.py [--size 1024] [--load 0.75]
       [--policy random_endpoint] [--save-at 1000] [--cycles 1500] [--sides 16x16x16]
       [--concentration 16] [--handovers 3] [--dir DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _calibration_runs import point_run, setup_django


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sides", default="16x16x16")
    parser.add_argument("--concentration", type=int, default=16)
    parser.add_argument("--pattern", default="all2all")
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--load", type=float, default=0.75)
    parser.add_argument("--policy", default="random_endpoint")
    parser.add_argument("--save-at", type=int, default=1000,
                        help="save at the first chunk's end from this cycle on")
    parser.add_argument("--cycles", type=int, default=1500, help="both runs stop here")
    parser.add_argument("--handovers", type=int, default=3,
                        help="stops asked at random moments in the last run (0: no such run)")
    parser.add_argument("--dir", default=None, help="where the file goes (default: a "
                        "temporary folder under HX_DATA_DIR, on the disk a worker would use)")
    return parser.parse_args()


def _point(args: argparse.Namespace):
    """The calibration point's shape, engine config (cut at ``--cycles``) and partitions."""
    from allocation.hyperx import MachineShape

    shape = MachineShape(tuple(int(s) for s in args.sides.split("x")), args.concentration)
    cfg, parts = point_run(shape, args.pattern, args.size, args.load, args.policy)
    return shape, dataclasses.replace(cfg, max_cycles=args.cycles), parts


def _measure(args: argparse.Namespace, cfg, parts, path: Path) -> dict:
    """Run the point saving once, read the save, run it again from there: the figures."""
    from simulation.engine import simulate
    from simulation.engine import simulator as engine
    from simulation.services import checkpoints

    figures: dict = {}
    built = engine._run_chunks

    def timed_chunks(*a, **k):  # the tables are built when the chunk loop starts
        figures.setdefault("built", time.perf_counter())
        return built(*a, **k)

    def hook(cycle, capture):
        figures.setdefault("chunk_ends", []).append((cycle, time.perf_counter()))
        if cycle < args.save_at or "write" in figures:
            return False
        state = capture()
        began = time.perf_counter()
        checkpoints.write(path, state, 0.0, 0.0)
        figures["write"], figures["state_mib"] = time.perf_counter() - began, state.nbytes / 2**20
        figures["saved_at"] = cycle
        return False

    engine._run_chunks = timed_chunks
    try:
        began = time.perf_counter()
        figures["whole"] = simulate(cfg, parts, checkpoint=hook).as_dict()
        ended = time.perf_counter()
        figures["setup_fresh"] = figures.pop("built") - began
        figures["run_seconds"] = ended - began - figures["setup_fresh"]
        if "write" not in figures:
            sys.exit(f"no chunk ended between cycle {args.save_at} and {args.cycles}: "
                     "raise --cycles")
        figures["file_mib"] = path.stat().st_size / 2**20
        began = time.perf_counter()
        saved = checkpoints.read(path)
        figures["read"] = time.perf_counter() - began
        began = time.perf_counter()
        figures["resumed"] = simulate(cfg, parts, resume=saved.state).as_dict()
        figures["setup_resumed"] = figures.pop("built") - began
        if args.handovers:
            figures["chunk_cycles"], figures["chunk_seconds"] = _chunks(figures["chunk_ends"])
            figures["handed_over"], figures["handovers"] = _handed_over(
                args, cfg, parts, path, saved.state, figures["chunk_seconds"])
    finally:
        engine._run_chunks = built
        path.unlink(missing_ok=True)
    return figures


def _chunks(ends: list[tuple[int, float]]) -> tuple[int, float]:
    """A chunk's cycles and its median seconds (the first run's chunks, save aside)."""
    import itertools
    import statistics

    steps = [(c1 - c0, t1 - t0) for (c0, t0), (c1, t1) in itertools.pairwise(ends)]
    return steps[0][0] if steps else ends[0][0], statistics.median(
        [seconds for _, seconds in steps] or [0.0])


def _handed_over(args: argparse.Namespace, cfg, parts, path: Path, state,
                 per_chunk: float) -> tuple[dict, list[float]]:
    """From ``state`` to the end, asked to hand over ``--handovers`` times, each at a
    random moment within two chunks; the end's result and each hand-over's seconds."""
    import random

    from simulation.engine import Suspended, simulate
    from simulation.services import checkpoints

    draw, seconds = random.Random(0), []
    while True:
        asked = (time.perf_counter() + draw.uniform(0.0, 2 * per_chunk)
                 if len(seconds) < args.handovers else float("inf"))
        clock = checkpoints.Clock(path, every=1e9, slice_seconds=0, log=lambda line: None,
                                  handover=lambda asked=asked: time.perf_counter() >= asked)
        try:
            return simulate(cfg, parts, checkpoint=clock, resume=state).as_dict(), seconds
        except Suspended:
            seconds.append(time.perf_counter() - asked)
            state = checkpoints.read(path).state


def _report(args: argparse.Namespace, f: dict) -> bool:
    from django.conf import settings

    per_k = f["run_seconds"] / args.cycles * 1000
    every, slice_seconds = settings.HX_SIM_CHECKPOINT_SECONDS, settings.HX_SIM_SLICE_SECONDS
    continuation = f["read"] + f["setup_resumed"]
    print(f"state: {f['state_mib']:,.0f} MiB at cycle {f['saved_at']:,}; the file "
          f"{f['file_mib']:,.0f} MiB")
    print(f"write: {f['write']:.2f} s ({f['state_mib'] / f['write']:,.0f} MiB/s); read: "
          f"{f['read']:.2f} s")
    print(f"build the run: {f['setup_fresh']:.2f} s from scratch, {f['setup_resumed']:.2f} s "
          f"with the save restored ({f['setup_resumed'] - f['setup_fresh']:+.2f} s)")
    print(f"the run: {per_k:.1f} s per 1,000 cycles ({f['run_seconds']:.0f} s for "
          f"{args.cycles:,} cycles, the save included)")
    print(f"one save every {every} s (HX_SIM_CHECKPOINT_SECONDS) costs {f['write'] / every:.2%} "
          f"of the run; a slice's continuation costs {continuation:.1f} s (read and build) "
          f"against {slice_seconds} s of simulation "
          f"({continuation / max(slice_seconds, 1):.2%})")
    same = f["resumed"] == f["whole"]
    print(f"the resumed run's result is the uninterrupted run's: {'yes' if same else 'NO'} "
          f"({f['whole']['cycles']:,} cycles, {f['whole']['packets_delivered']:,} packets "
          "delivered)")
    if args.handovers:
        waits = ", ".join(f"{w:.2f}" for w in f["handovers"])
        again = f["handed_over"] == f["whole"]
        print(f"hand-over of a stopping worker: {waits} s from the request to the save's end "
              f"(the rest of a chunk, {f['chunk_cycles']:,} cycles in a median "
              f"{f['chunk_seconds']:.2f} s here, the capture, the write); stopped and "
              f"resumed {len(f['handovers'])} times, the run ends as the uninterrupted one: "
              f"{'yes' if again else 'NO'}")
        same = same and again
    print(f"# host load average {os.getloadavg()[0]:.2f}")
    return same


def main() -> None:
    args = _arguments()
    setup_django()
    from django.conf import settings

    shape, cfg, parts = _point(args)
    folder = Path(args.dir or tempfile.mkdtemp(prefix="bench-checkpoint-",
                                               dir=settings.DATA_DIR))
    print(f"# {shape.node_count:,} nodes ({args.sides}, c = {args.concentration}), "
          f"{args.pattern} of {args.size} at {args.load:.0%} load, {args.policy}, seed 0: "
          f"saved at the first chunk's end from cycle {args.save_at:,}, both runs to cycle "
          f"{args.cycles:,}; the file in {folder}")
    try:
        figures = _measure(args, cfg, parts, folder / "simulationrun-0.ckpt")
    finally:
        if not args.dir:
            folder.rmdir()
    if not _report(args, figures):
        sys.exit(1)


if __name__ == "__main__":
    main()
