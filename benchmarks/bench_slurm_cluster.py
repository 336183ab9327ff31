"""Start and stop the local Slurm cluster at several machine sizes; print time and memory.

Usage: .venv/bin/python benchmarks/bench_slurm_cluster.py [--sizes 64,512]
       [--base-port N (default: a free span in 22000-32767)] [--accounting]

For each size (64 = 4x4, c = 4; 512 = 8x8, c = 8; 1024 = 8x8, c = 16;
2048 = 16x16, c = 8; 4096 = 16x16, c = 16) it starts
munged, slurmctld (and slurmdbd with ``--accounting``) and one slurmd per node in
a scratch directory (``allocation.slurm.LocalCluster``), and prints the seconds
until every node answers, the memory of all the cluster's processes (sum of
PSS, and the drop of the host's MemAvailable), the seconds of one
``sinfo --json`` and one ``squeue --json`` after a whole-machine job was
submitted, and the seconds to stop. Needs root and Debian's slurmctld, slurmd,
slurm-client and munge; exits 2 if they are missing. Nothing is left running.
A slurmd holds the whole node table, so memory grows with the square of the
node count: a slurmd of a 4096-node machine takes 8.2 MiB (PSS), so all 4096
need about 33 GiB and that size is not in the defaults (bench_slurm_sync.py runs
it with a slurmd for 512 of its nodes, ``ClusterSpec.live_nodes``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from allocation.slurm import Accounting, ClusterSpec, LocalCluster  # noqa: E402
from allocation.slurm.local import find_free_base_port  # noqa: E402

SHAPES = {64: ((4, 4), 4), 512: ((8, 8), 8), 1024: ((8, 8), 16), 2048: ((16, 16), 8),
          4096: ((16, 16), 16)}


def mem_available_kib() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1])
    return 0


def timed(call) -> float:
    started = time.monotonic()
    call()
    return time.monotonic() - started


def measure(size: int, base_port: int | None, accounting: bool) -> dict[str, float]:
    sides, c = SHAPES[size]
    state_dir = tempfile.mkdtemp(prefix=f"hx-bench-slurm-{size}-", dir="/tmp")
    spec = ClusterSpec(machine=f"bench{size}", sides=sides, concentration=c,
                       hostnames=tuple(f"hx{i:04d}" for i in range(1, size + 1)),
                       state_dir=state_dir, base_port=base_port or find_free_base_port(size),
                       accounting=Accounting() if accounting else None)
    cluster = LocalCluster(spec, progress=lambda line: print(f"    {line}", flush=True))
    before = mem_available_kib()
    try:
        up = cluster.start()
        time.sleep(2)
        memory = cluster.memory_kib()
        used = before - mem_available_kib()
        client = cluster.client(timeout=120)
        client.submit(["sleep", "30"], num_nodes=size, name="whole")
        sinfo = timed(client.nodes)
        squeue = timed(client.jobs)
        down = timed(cluster.stop)
    finally:
        cluster.purge()
        shutil.rmtree(state_dir, ignore_errors=True)
    return {"up": up, "pss_mib": memory.get("pss", 0) / 1024, "avail_mib": used / 1024,
            "sinfo": sinfo, "squeue": squeue, "stop": down}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", default="64,512")
    parser.add_argument("--base-port", type=int, default=None)
    parser.add_argument("--accounting", action="store_true")
    args = parser.parse_args()
    if not all(shutil.which(b) for b in ("slurmctld", "slurmd", "sinfo", "munged")):
        print("slurmctld, slurmd, slurm-client and munge are needed: apt-get install -y "
              "slurmctld slurmd slurm-client munge", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("the local Slurm cluster runs its daemons as root", file=sys.stderr)
        return 2
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        print(f"== {size} nodes", flush=True)
        rows.append((size, measure(size, args.base_port, args.accounting)))
    print(f"{'nodes':>6} {'up s':>7} {'PSS MiB':>8} {'avail MiB':>10} {'sinfo s':>8} "
          f"{'squeue s':>9} {'stop s':>7}")
    for size, r in rows:
        print(f"{size:>6} {r['up']:>7.1f} {r['pss_mib']:>8.0f} {r['avail_mib']:>10.0f} "
              f"{r['sinfo']:>8.2f} {r['squeue']:>9.2f} {r['stop']:>7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
