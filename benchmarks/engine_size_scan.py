"""Engine speed against machine size: where the ``big`` row's shortfall comes from.

The ``big`` row of ``bench_simulation.py`` (16 x 16 x 16, c = 16) moves phits
at about a fifth of the rate of the 8 x 8 reference, against a target of 0.8.
This script runs the same traffic (uniform 0.5, MIN, 4 VCs, 16-phit packets)
on machines between the two and prints, for each, the state the loop works on
(buffers, queues, head records, packet pool): the estimate the portal checks
before a run (``estimate_memory(...).running``, an upper bound that counts
every array and the pool at full size) and what the run added to the
process's peak resident memory (the pages it touched), the latter against
this host's last-level cache; and phit-hops per second as a share of the 8 x 8
reference measured in the same run.

Every machine gets about the same work (``--budget`` endpoint-cycles, so a
large machine runs fewer cycles) and runs in a fresh process after a warm-up
run in that process (numba cache load excluded), ``--repeat`` times in turn;
the figures are medians.  If the per-hop work stayed the same, the share would
stay near 1 whatever the size.  A machine name may end in ``bIN-OUT`` (input
and output buffer packets per VC; default 8-4): ``8x8x8c8b256-128`` is the
8 x 8 x 8 machine with a footprint several times larger and the same traffic
(at this load no buffer fills, so the packets, the hops and the random draws
are the same, and the ``phit-hops`` column shows it), the control that tells
a slowdown caused by the size of the state alone from one caused by the
machine's shape (more ports per switch, more switches per packet).

Usage: python benchmarks/engine_size_scan.py [--repeat K] [--budget N] [--machines 8x8c8,...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MACHINES = ("8x8c8", "16x16c16", "8x8x8c8", "8x8x8c8b256-128", "10x10x10c10", "12x12x12c12",
            "16x16x16c16")


def _parse(machine: str) -> tuple[tuple[int, ...], int, tuple[int, int] | None]:
    """``'8x8x8c8'`` -> ``((8, 8, 8), 8, None)``; ``'8x8x8c8b256-128'`` also gives
    the input and output buffer sizes in packets per VC (default 8 and 4)."""
    sides, _, rest = machine.partition("c")
    conc, _, buffers = rest.partition("b")
    sizes = None
    if buffers:
        inp, out = buffers.split("-")
        sizes = (int(inp), int(out))
    return tuple(int(s) for s in sides.split("x")), int(conc), sizes


def _config(machine: str, budget: int) -> dict:
    sides, conc, buffers = _parse(machine)
    endpoints = conc
    for s in sides:
        endpoints *= s
    cycles = max(200, budget // endpoints)
    cfg = dict(sides=sides, concentration=conc, ranks=endpoints, routing="min",
               pattern="uniform", rate=0.5, seed=1, max_cycles=cycles,
               warmup_cycles=cycles // 2)
    if buffers:
        cfg.update(input_buffer_packets=buffers[0], output_buffer_packets=buffers[1])
    return cfg


def run_one(machine: str, budget: int) -> dict:
    """One machine in this process, after a warm-up run; its figures."""
    import resource

    import numpy as np

    from simulation.engine import SimConfig, simulate
    from simulation.engine.memory import estimate_memory

    simulate(SimConfig(sides=(2, 2), concentration=2, ranks=8, max_cycles=200,
                       warmup_cycles=50), [np.arange(8)])
    cfg = SimConfig(**_config(machine, budget))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0 = time.perf_counter()
    res = simulate(cfg, [np.arange(cfg.endpoints)])
    wall = time.perf_counter() - t0
    return {"machine": machine, "endpoints": cfg.endpoints, "cycles": res.cycles,
            "wall": wall, "phit_hops": res.phit_hops,
            "estimate": estimate_memory(cfg).running,
            "grown_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before}


def _spawn(machine: str, budget: int) -> dict:
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--one", machine, "--budget", str(budget)],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def last_level_cache() -> int | None:
    """Bytes of the largest CPU cache of cpu0 (Linux sysfs), or None if unknown."""
    best = None
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            text = (index / "size").read_text().strip()
        except OSError:
            continue
        scale = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1)
        size = int(text.rstrip("KMG")) * scale
        best = size if best is None else max(best, size)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--machines", default=",".join(MACHINES),
                    help="comma-separated SIDEScCONC, the first is the yardstick")
    ap.add_argument("--budget", type=int, default=25_000_000, help="endpoint-cycles per run")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.budget)))
        return
    machines = [m for m in args.machines.split(",") if m]
    runs: dict[str, list[dict]] = {m: [] for m in machines}
    _spawn(machines[0], 10_000)  # numba's on-disk cache exists before any timing
    for _ in range(args.repeat):
        for m in machines:  # in turn, so that a slow spell of the host hits every machine
            runs[m].append(_spawn(m, args.budget))
    print(f"load average after the runs: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; "
          f"medians of {args.repeat}")
    _report(machines, runs, last_level_cache())


def _report(machines: list[str], runs: dict[str, list[dict]], llc: int | None) -> None:
    """One line per machine: its state, and its phit-hops/s as a share of the first's."""
    print(f"last-level cache: {llc / 2**20:.0f} MiB" if llc else "last-level cache: unknown")
    rate = {m: [r["phit_hops"] / r["wall"] for r in runs[m]] for m in machines}
    ref = statistics.median(rate[machines[0]])
    print(f"{'machine':<16} {'endpoints':>9} {'cycles':>7} {'phit-hops':>10} {'estimate':>10} "
          f"{'touched':>10} {'touched/LLC':>11} {'phit-hops/s':>12} "
          f"{'share of ' + machines[0]:>16}  pairs")
    for m in machines:
        r0 = runs[m][0]
        touched = statistics.median(r["grown_mib"] for r in runs[m])
        share = statistics.median(rate[m]) / ref
        pairs = ", ".join(f"{a / b:.2f}" for a, b in zip(rate[m], rate[machines[0]], strict=True))
        ratio = f"{touched * 2**20 / llc:.2f}" if llc else "-"
        estimate = r0["estimate"] / 2**20
        print(f"{m:<16} {r0['endpoints']:>9,} {r0['cycles']:>7,} {r0['phit_hops']:>10,} "
              f"{estimate:>6.1f} MiB "
              f"{touched:>6.1f} MiB {ratio:>11} {statistics.median(rate[m]):>12,.0f} "
              f"{share:>16.2f}  {pairs}")


if __name__ == "__main__":
    main()
