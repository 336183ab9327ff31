"""Speed of simulation.engine next to BookSim 2 on the ``ref`` configuration.

Why: issue 19 asks for the engine's speed against BookSim 2, the usual
cycle-accurate network simulator, on the same configuration.  This script
runs both on bench_simulation.py's ``ref`` row (8 x 8 HyperX, 8 endpoints
per switch, 4 VCs, 16-phit packets, uniform traffic at 0.5 phits/cycle/
endpoint, MIN routing), interleaved, and prints cycles/s (wall and per CPU
second), the latency and throughput each reports, and the speed ratio.

How: our side reuses bench_simulation.py (its ``ref`` row, each run in a
fresh process, numba cache load excluded); BookSim runs the configuration
in ``BOOKSIM_CONFIG`` below, written to a temporary directory.  BookSim's
``flatfly`` topology (a k-ary n-flat with concentration c) with k = 8, n = 2,
c = 8 is the 8 x 8 HyperX with c = 8.  Matching choices:

- routing ``adaptive_xyyx`` (``adaptive_xyyx_flatfly``): at the first switch
  a packet takes XY or YX order, whichever output has fewer credits in use,
  then goes minimally; in 2D that is our MIN (the least occupied of the
  minimal ports, hop-class VCs).  BookSim's ``ran_min`` on flatfly is in
  fact deterministic dimension order (our DOR), so it is not used;
- ``packet_size = 16`` flits, ``injection_rate_uses_flits = 1`` and
  ``injection_rate = 0.5``: 0.5 flits/cycle/node, Bernoulli packet arrivals;
- ``num_vcs = 4``, ``vc_buf_size = 128`` flits (our 8 packets of 16 phits
  per VC), ``internal_speedup = 2.0`` (our speedup 2), ``use_noc_latency =
  0`` (every channel 1 cycle, not on-chip wire lengths);
- ``sim_type = latency``, one warm-up period and three measured periods of
  ``--booksim-cycles / 4`` each (stopping thresholds off, so the run length
  is fixed), then BookSim drains the measured packets (a few hundred cycles
  more; the cycle count used is BookSim's own "Time taken is N cycles").
  BookSim runs 20,000 cycles by default (about 30 s on a quiet 2-core
  machine of this class) while our row runs bench_simulation.py's 50,000:
  both rates are per simulated cycle and do not depend on the length.

Times: BookSim's cycles/s divides its cycles by its own "Total run time"
(wall time of the simulation, network construction excluded) and, per CPU
second, by the user + system time of the whole process (wait4); ours are
bench_simulation.py's wall and CPU time of the simulate() call.

The models differ, so the speeds are those of two different amounts of
work: BookSim models each router as a cycle-accurate pipeline (route, VC
allocation, switch allocation, traversal; separable input-first allocators;
flits move one by one, wormhole flow control); our engine is a virtual
cut-through, packet-granular model (input and output buffers, a random
allocator, internal speedup 2).  Both should accept the offered 0.5 and
report packet latencies of the same order (BookSim's counts from packet
creation, source queueing included).

BookSim 2 setup (outside this repository)::

    git clone https://github.com/booksim/booksim2 /work/booksim-src
    apt-get install -y g++ flex bison
    # flatfly asserts xr == yr (c a square); c = 8 needs xr = 4, yr = 2:
    sed -i 's|^  assert(_xrouter == _yrouter);|  // &|' \\
        /work/booksim-src/src/networks/flatfly_onchip.cpp
    make -C /work/booksim-src/src      # builds src/booksim

The x/y/xr/yr layout only decides BookSim's node numbering and, with
``use_noc_latency = 1``, its wire lengths; with uniform traffic and 1-cycle
channels the 4 x 2 layout is the plain 8 x 8 flattened butterfly.

``--engine-rev REV`` also runs the engine of a git revision (e.g. 95ad258,
engine 2.0) from a temporary detached ``git worktree`` of this repository,
interleaved with the others, so one invocation prints current vs BookSim
and REV vs BookSim.

Without ``--booksim`` (or ``HX_BOOKSIM``) it says so and exits 0, as
``make bench`` runs every script bare.

Usage: python benchmarks/bench_booksim.py --booksim PATH [--cycles N]
       [--booksim-cycles N] [--repeat K] [--engine-rev REV] [--print-config]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from argparse import Namespace
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import bench_simulation  # noqa: E402  (the ref row's configuration and runner)

#: BookSim 2 configuration of the ``ref`` row; ``{sample_period}`` is a
#: quarter of the simulated cycles (one warm-up period, three measured).
BOOKSIM_CONFIG = """\
// hxportal benchmarks/bench_booksim.py: the ref row of bench_simulation.py
topology = flatfly;
k = 8;
n = 2;
c = 8;
x = 8;
y = 8;
xr = 4;
yr = 2;
use_noc_latency = 0;
routing_function = adaptive_xyyx;
num_vcs = 4;
vc_buf_size = 128;
internal_speedup = 2.0;
routing_delay = 0;
vc_alloc_delay = 1;
sw_alloc_delay = 1;
st_final_delay = 1;
credit_delay = 1;
vc_allocator = separable_input_first;
sw_allocator = separable_input_first;
traffic = uniform;
packet_size = 16;
injection_rate_uses_flits = 1;
injection_rate = 0.5;
sim_type = latency;
warmup_periods = 1;
sample_period = {sample_period};
stopping_thres = -1.0;
acc_stopping_thres = -1.0;
seed = 1;
"""

#: Overall statistics BookSim prints at the end ("name = value (1 samples)").
_BOOKSIM_FIGURES = {
    "latency": "Packet latency average",
    "network_latency": "Network latency average",
    "offered": "Injected flit rate average",
    "throughput": "Accepted flit rate average",
    "hops": "Hops average",
}


def booksim_config(cycles: int) -> str:
    """The configuration text for a run of about ``cycles`` cycles (+ drain)."""
    return BOOKSIM_CONFIG.format(sample_period=max(cycles // 4, 1))


def parse_booksim(text: str) -> dict:
    """Cycles, BookSim's own run time and the overall statistics of one run."""
    cycles = re.search(r"^Time taken is (\d+) cycles", text, re.M)
    run_time = re.search(r"^Total run time ([0-9.eE+-]+)", text, re.M)
    if not cycles or not run_time:
        raise RuntimeError("BookSim output lacks 'Time taken' or 'Total run time':\n"
                           + text[-2000:])
    overall = text[text.rindex("====== Overall Traffic Statistics"):]
    figs: dict = {"cycles": int(cycles.group(1)), "run_time": float(run_time.group(1))}
    for key, label in _BOOKSIM_FIGURES.items():
        m = re.search(rf"^{re.escape(label)}\s*=\s*([0-9.eE+-]+)", overall, re.M)
        figs[key] = float(m.group(1)) if m else None
    return figs


def run_booksim(binary: Path, cycles: int, workdir: Path) -> dict:
    """Run BookSim once; wall and CPU seconds of the whole process from wait4."""
    cfg = workdir / "ref.cfg"
    cfg.write_text(booksim_config(cycles))
    out_path = workdir / "booksim.out"
    with out_path.open("w") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen([str(binary), str(cfg)], cwd=workdir, stdout=out,
                                stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    text = out_path.read_text(errors="replace")
    # BookSim's main() returns -1 (exit status 255) on success and 0 when the
    # simulation was unstable; anything else is a crash.
    if proc.returncode != 255:
        hint = (" (flatfly's xr == yr assertion: patch it, see this script's docstring)"
                if "_xrouter == _yrouter" in text else "")
        raise RuntimeError(f"BookSim exited with {proc.returncode}{hint}:\n{text[-2000:]}")
    figs = parse_booksim(text)
    figs.update(wall=wall, cpu=usage.ru_utime + usage.ru_stime,
                peak_mib=usage.ru_maxrss / 1024)
    return figs


def run_engine(root: Path, cycles: int) -> dict:
    """bench_simulation.py's ``ref`` row on the engine of checkout ``root``."""
    figs = bench_simulation._spawn(root, "ref", Namespace(cycles=cycles, big_cycles=600))
    figs["run_time"] = figs["wall"]
    return figs


@contextmanager
def engine_worktree(rev: str) -> Iterator[Path]:
    """A temporary detached worktree of this repository at ``rev``."""
    tmp = Path(tempfile.mkdtemp(prefix="hx_engine_rev_"))
    path = tmp / "checkout"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet",
                    str(path), rev], check=True)
    try:
        yield path
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(path)],
                       check=False)
        subprocess.run(["rm", "-rf", str(tmp)], check=False)


def _median(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def _rates(runs: list[dict]) -> tuple[float, float]:
    """Median cycles per second of the simulation (wall) and per CPU second."""
    cycles = runs[0]["cycles"]
    return cycles / _median(runs, "run_time"), cycles / _median(runs, "cpu")


def describe(label: str, runs: list[dict]) -> str:
    """One line: cycles, times, cycles/s, latency and throughput."""
    per_wall, per_cpu = _rates(runs)
    lat = runs[0]["latency"]
    lat_text = f"{lat:.1f} cycles" if lat is not None else "n/a"
    return (f"{label}: {runs[0]['cycles']} cycles in {_median(runs, 'run_time'):.2f} s "
            f"({_median(runs, 'cpu'):.2f} s CPU): {per_wall:,.0f} cycles/s "
            f"({per_cpu:,.0f} per CPU s); packet latency {lat_text}, "
            f"accepted {runs[0]['throughput']:.3f} phits/cycle/endpoint, "
            f"peak {_median(runs, 'peak_mib'):,.0f} MiB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--booksim", type=Path, default=os.environ.get("HX_BOOKSIM") or None,
                    help="a built BookSim 2 binary (src/booksim); default $HX_BOOKSIM")
    ap.add_argument("--cycles", type=int, default=50_000,
                    help="cycles of our ref row (bench_simulation.py --cycles)")
    ap.add_argument("--booksim-cycles", type=int, default=20_000,
                    help="cycles of the BookSim run before its drain (about 30 s at "
                         "BookSim's ~650 cycles/s; its rate does not depend on the length)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each (medians)")
    ap.add_argument("--engine-rev", help="also run the engine of this git revision")
    ap.add_argument("--print-config", action="store_true",
                    help="print the BookSim configuration and exit")
    args = ap.parse_args()
    bs_cycles = args.booksim_cycles
    if args.print_config:
        print(booksim_config(bs_cycles), end="")
        return
    if not args.booksim:  # `make bench` runs every script without arguments
        print("bench_booksim: skipped, no BookSim 2 binary (--booksim PATH or HX_BOOKSIM; "
              "the docstring says how to build one)")
        return
    with tempfile.TemporaryDirectory(prefix="hx_booksim_") as tmp, \
            (engine_worktree(args.engine_rev) if args.engine_rev else _none()) as rev_root:
        if rev_root is not None:  # compile/cache the revision's kernels outside the figures
            run_engine(rev_root, 200)
        booksim: list[dict] = []
        ours: list[dict] = []
        theirs: list[dict] = []
        for _ in range(args.repeat):  # interleaved: BookSim, current, REV, ...
            booksim.append(run_booksim(args.booksim.resolve(), bs_cycles, Path(tmp)))
            ours.append(run_engine(ROOT, args.cycles))
            if rev_root is not None:
                theirs.append(run_engine(rev_root, args.cycles))
    report(booksim, ours, theirs, args.engine_rev)


@contextmanager
def _none() -> Iterator[None]:
    yield None


def report(booksim: list[dict], ours: list[dict], theirs: list[dict],
           rev: str | None) -> None:
    """Each simulator's line and the speed ratios to BookSim."""
    print(f"load average before the report: {os.getloadavg()[0]:.2f} (1 min), "
          f"{len(booksim)} run(s) each, medians")
    print(describe("BookSim 2 (flatfly 8x8 c=8, adaptive_xyyx)", booksim))
    rows = [("engine (this checkout)", ours)]
    if theirs:
        rows.append((f"engine ({rev})", theirs))
    bs_wall, bs_cpu = _rates(booksim)
    for label, runs in rows:
        print(describe(label, runs))
    for label, runs in rows:
        wall, cpu = _rates(runs)
        print(f"{label} / BookSim 2: {wall / bs_wall:,.0f}x the cycles/s (wall), "
              f"{cpu / bs_cpu:,.0f}x per CPU second")


if __name__ == "__main__":
    main()
