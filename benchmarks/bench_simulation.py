"""Speed of the packet-level simulator (simulation.engine), row by row.

Rows (the targets of the speed work are in brackets):

- ``ref``: the reference, 8 x 8 HyperX, c = 8, 4 VCs, 16-phit packets,
  uniform traffic at 0.5 phits/cycle/endpoint, MIN routing;
- ``sat``: the same at saturation (rate 1.0) [>= 0.5 of ``ref``'s cycles/s];
- ``big``: 16 x 16 x 16, c = 16 (65,536 endpoints), uniform 0.5, MIN, a short
  run [>= 0.8 of ``ref``'s phit-hops/s, < 2 GiB];
- ``interf``: 8 x 8, c = 8, scenario interference: a 64-rank all-to-all
  target (policy diagonal) at the study's volume, background permutation at
  1.0, Omni-WAR; the whole simulate() call;
- ``interf-process``: the same run as the issue measures it [<= 4 s]: the
  whole ``manage.py hx_simulate --config FILE`` process (Python and Django
  start-up, numba cache load, simulation, printing), timed from outside.

Every in-process row runs in a fresh process (so its peak resident memory is
its own) after a tiny warm-up run in that process (numba cache load,
excluded from the figures; the first row also reports it).  Before any
timing, each engine runs one discarded warm-up process so that numba's
on-disk cache exists (``interf-process`` includes loading it, not compiling).

``--baseline DIR`` runs every row a second time with the engine of another
checkout, interleaved (new, baseline, new, baseline ...), and prints both
engines' figures, their ratio and the targets' share figures for both.
``--baseline-rev REV`` does the same for a git revision of this repository
(e.g. ``95ad258``, engine 2.0): it adds a temporary detached worktree of REV,
runs its engine with this Python (same venv) and removes the worktree.

Usage: python benchmarks/bench_simulation.py [--rows ref,sat,big,interf,interf-process]
       [--cycles N] [--big-cycles N] [--baseline DIR | --baseline-rev REV] [--repeat K]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROWS = ("ref", "sat", "big", "interf", "interf-process")

#: the ``interf`` row as a ``hx_simulate`` JSON config (README "Simulation config")
INTERF_JSON = dict(sides=[8, 8], concentration=8, ranks=64, scenario="interference",
                   pattern="all2all", policy="diagonal", background_rate=1.0,
                   routing="omniwar", seed=1)


def _config(row: str, cycles: int, big_cycles: int) -> tuple[dict, str]:
    ref = dict(sides=(8, 8), concentration=8, ranks=512, routing="min", pattern="uniform",
               rate=0.5, seed=1)
    if row == "ref":
        return dict(ref, max_cycles=cycles, warmup_cycles=cycles // 5), "all"
    if row == "sat":
        return dict(ref, rate=1.0, max_cycles=cycles // 4, warmup_cycles=cycles // 20), "all"
    if row == "big":
        return dict(sides=(16, 16, 16), concentration=16, ranks=65_536, routing="min",
                    pattern="uniform", rate=0.5, seed=1, max_cycles=big_cycles,
                    warmup_cycles=big_cycles // 2), "all"
    if row == "interf":
        return dict(INTERF_JSON, sides=tuple(INTERF_JSON["sides"])), "policy"
    raise ValueError(row)


def _warm() -> float:
    """A tiny run in this process (numba cache load or compile); its seconds."""
    import numpy as np

    from simulation.engine import SimConfig, simulate

    t0 = time.perf_counter()
    simulate(SimConfig(sides=(2, 2), concentration=2, ranks=8, pattern="uniform",
                       rate=0.5, max_cycles=200), [np.arange(8)])
    return time.perf_counter() - t0


def run_one(row: str, cycles: int, big_cycles: int) -> dict:
    """Run one row in this process and return its figures."""
    import numpy as np

    from simulation.engine import SimConfig, simulate
    from simulation.engine.scenarios import build_partitions

    first = _warm()
    kw, parts = _config(row, cycles, big_cycles)
    cfg = SimConfig(**kw)
    partitions = [np.arange(cfg.endpoints)] if parts == "all" else build_partitions(cfg)
    t0, c0 = time.perf_counter(), time.process_time()
    res = simulate(cfg, partitions)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {
        "row": row, "first_call": first, "wall": wall, "cpu": cpu, "cycles": res.cycles,
        "phit_hops": res.phit_hops, "throughput": res.throughput,
        "latency": res.latency_mean, "makespan": res.makespan_cycles,
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _env(root: Path) -> dict:
    return dict(os.environ, PYTHONPATH=str(root))


def _spawn(root: Path, row: str, args: argparse.Namespace) -> dict:
    if row == "interf-process":
        return _spawn_process(root)
    env = _env(root)
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--one", row, "--cycles",
         str(args.cycles), "--big-cycles", str(args.big_cycles)],
        cwd=root, env=env, capture_output=True, text=True, check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _spawn_process(root: Path) -> dict:
    """The whole ``manage.py hx_simulate`` process of the ``interf`` row, timed from outside."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(INTERF_JSON, fh)
    try:
        with tempfile.TemporaryFile("w+") as out:
            t0 = time.perf_counter()
            proc = subprocess.Popen(
                [sys.executable, str(root / "manage.py"), "hx_simulate", "--config", fh.name,
                 "--json"],
                cwd=root, env=_env(root), stdout=out, stderr=subprocess.DEVNULL,
            )
            _, status, usage = os.wait4(proc.pid, 0)  # this child's own CPU time and peak
            wall = time.perf_counter() - t0
            proc.returncode = os.waitstatus_to_exitcode(status)
            if proc.returncode != 0:
                raise RuntimeError(f"hx_simulate in {root} exited with {proc.returncode}")
            out.seek(0)
            text = out.read()
    finally:
        os.unlink(fh.name)
    res = json.loads(text)
    cpu = usage.ru_utime + usage.ru_stime
    return {
        "row": "interf-process", "first_call": 0.0, "wall": wall, "cpu": cpu,
        "cycles": res["cycles"], "phit_hops": res["phit_hops"],
        "throughput": res["throughput"], "latency": res["latency_mean"],
        "makespan": res["makespan_cycles"], "peak_mib": usage.ru_maxrss / 1024,
        "inner": res["wall_seconds"],
    }


def _warm_engine(root: Path) -> None:
    """One discarded process per engine, so that numba's on-disk cache exists."""
    subprocess.run([sys.executable, str(Path(__file__).resolve()), "--warm"], cwd=root,
                   env=_env(root), capture_output=True, text=True, check=True)


@contextmanager
def _revision_checkout(rev: str) -> Iterator[Path]:
    """A temporary detached git worktree of ``rev`` (removed afterwards)."""
    tmp = Path(tempfile.mkdtemp(prefix="hx_bench_base_"))
    path = tmp / "checkout"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), rev],
                   check=True, capture_output=True, text=True)
    try:
        yield path
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(path)],
                       check=False, capture_output=True, text=True)
        shutil.rmtree(tmp, ignore_errors=True)
        subprocess.run(["git", "-C", str(ROOT), "worktree", "prune"], check=False,
                       capture_output=True, text=True)


def _median(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def _describe(runs: list[dict]) -> str:
    wall, cpu = _median(runs, "wall"), _median(runs, "cpu")
    cyc, hops = runs[0]["cycles"], runs[0]["phit_hops"]
    text = (f"{cyc} cycles in {wall:.2f} s wall ({cpu:.2f} s CPU): "
            f"{cyc / wall:,.0f} cycles/s ({cyc / cpu:,.0f} per CPU s), "
            f"{hops / wall:,.0f} phit-hops/s ({hops / cpu:,.0f} per CPU s), "
            f"peak {_median(runs, 'peak_mib'):,.0f} MiB")
    if runs[0]["makespan"] is not None:
        text += f", makespan {runs[0]['makespan']}"
    if "inner" in runs[0]:
        text += f" (whole process; simulation inside it {_median(runs, 'inner'):.2f} s)"
    return text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default=",".join(ROWS))
    ap.add_argument("--cycles", type=int, default=50_000, help="ref row (sat: a quarter)")
    ap.add_argument("--big-cycles", type=int, default=600)
    base = ap.add_mutually_exclusive_group()
    base.add_argument("--baseline", type=Path, help="checkout whose engine is the yardstick")
    base.add_argument("--baseline-rev", help="git revision whose engine is the yardstick "
                      "(a temporary worktree of it, e.g. 95ad258 for engine 2.0)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per row (medians)")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--warm", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.warm:
        _warm()
        return
    if args.one:
        print(json.dumps(run_one(args.one, args.cycles, args.big_cycles)))
        return
    rows = [r for r in args.rows.split(",") if r]
    unknown = sorted(set(rows) - set(ROWS))
    if unknown:
        ap.error(f"unknown rows {unknown}; rows are {', '.join(ROWS)}")
    if args.baseline_rev:
        with _revision_checkout(args.baseline_rev) as path:
            print(f"baseline: {args.baseline_rev} in a temporary worktree {path}")
            _measure(rows, args, path)
    else:
        _measure(rows, args, args.baseline.resolve() if args.baseline else None)


def _measure(rows: list[str], args: argparse.Namespace, baseline: Path | None) -> None:
    """Warm both engines, run the rows interleaved ``repeat`` times, print the report."""
    new: dict[str, list[dict]] = {r: [] for r in rows}
    old: dict[str, list[dict]] = {r: [] for r in rows}
    _warm_engine(ROOT)
    if baseline is not None:
        _warm_engine(baseline)
    for _ in range(args.repeat):
        for row in rows:  # interleaved: new, baseline, new, baseline ...
            new[row].append(_spawn(ROOT, row, args))
            if baseline is not None:
                old[row].append(_spawn(baseline, row, args))
    print(f"load average after the runs: {os.getloadavg()[0]:.2f} (1 min), "
          f"{os.getloadavg()[1]:.2f} (5 min) on {os.cpu_count()} CPUs")
    _report(rows, new, old if baseline is not None else None)


def _report(rows: list[str], new: dict[str, list[dict]],
            old: dict[str, list[dict]] | None) -> None:
    """Every row, its ratio to the baseline, and the targets' relative figures."""
    inproc = [r for r in rows if r != "interf-process"]
    if inproc:
        print(f"first call (numba cache load + 200 cycles): "
              f"{new[inproc[0]][0]['first_call']:.2f} s")
    for row in rows:
        print(f"{row}: {_describe(new[row])}")
        if old:
            print(f"{row} (baseline): {_describe(old[row])}")
            r = _median(old[row], "wall") / _median(new[row], "wall")
            rc = _median(old[row], "cpu") / _median(new[row], "cpu")
            pairs = ", ".join(f"{o['wall'] / n['wall']:.2f}"
                              for n, o in zip(new[row], old[row], strict=True))
            print(f"{row}: {r:.2f}x the baseline's speed (wall), {rc:.2f}x (CPU); "
                  f"pair by pair (wall): {pairs}")
    for label, figs in (("new", new), ("baseline", old or {})):
        _relative_rates(label, figs)


def _relative_rates(label: str, figs: dict[str, list[dict]]) -> None:
    """sat's cycles/s and big's phit-hops/s as fractions of ref's (the targets' terms)."""
    if not figs.get("ref"):
        return
    ref_rate = figs["ref"][0]["cycles"] / _median(figs["ref"], "cpu")
    ref_hops = figs["ref"][0]["phit_hops"] / _median(figs["ref"], "cpu")
    if figs.get("sat"):
        sat_rate = figs["sat"][0]["cycles"] / _median(figs["sat"], "cpu")
        print(f"{label}: saturation cycles/s = {sat_rate / ref_rate:.2f} of the reference's")
    if figs.get("big"):
        big_hops = figs["big"][0]["phit_hops"] / _median(figs["big"], "cpu")
        print(f"{label}: 16x16x16 phit-hops/s = {big_hops / ref_hops:.2f} of the reference's")


if __name__ == "__main__":
    main()
