"""The replay against the real Slurm: a small workload in compressed time.

Starts a local Slurm cluster (16 nodes: 2x2 switches, c = 4, ``allocation.slurm``,
``sched/backfill`` with ``bf_interval=1`` so that backfill is not held back by
Slurm's 30 s default), submits a seeded workload of sleep jobs at their submit
times (time limits of 1 or 2 minutes, Slurm's unit; run times 15-110 s), waits
for every job to end, reads Slurm's submit, start and end times, and replays the
same jobs (Slurm's submit times and run times, the requested limits) with every
adjustment off. Prints each job's start in Slurm and in the replay, and how far
apart they are. Stops the cluster it started.

Usage (root, Debian's Slurm): HX_SLURM_TEST_PORTS=20000-21999 \\
    python benchmarks/whatif_slurm_check.py [--jobs 24] [--seed 1] [--dir /tmp/hx-whatif-slurm]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import allocation.slurm.local as local
from allocation.hyperx import HyperX
from allocation.slurm import ClusterSpec, LocalCluster
from whatif.replay import IDEAL, Job, replay

SCHEDULER = "SchedulerParameters=bf_interval=1,bf_resolution=1,sched_min_interval=0\n"


def _workload(n_jobs: int, seed: int) -> list[tuple[float, int, int, int]]:
    """(submit offset s, nodes, run s, limit min) per job."""
    rng = np.random.default_rng(seed)
    out, t = [], 0.0
    for _ in range(n_jobs):
        t += float(rng.uniform(2, 12))
        nodes = int(min(16, max(1, round(2 ** rng.uniform(0, 4)))))
        limit = int(rng.integers(1, 3))
        run = int(rng.integers(15, 60 * limit - 10))
        out.append((t, nodes, run, limit))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=24)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dir", default="/tmp/hx-whatif-slurm")
    args = parser.parse_args()
    low, high = (int(x) for x in os.environ.get("HX_SLURM_TEST_PORTS", "20000-21999").split("-"))
    base = local.find_free_base_port(16, low=low, high=high)
    original = local.slurm_conf
    local.slurm_conf = lambda spec: original(spec) + SCHEDULER
    spec = ClusterSpec(machine="wi", sides=(2, 2), concentration=4,
                       hostnames=tuple(f"wi{i:02d}" for i in range(1, 17)),
                       state_dir=args.dir, base_port=base, topology="none")
    cluster = LocalCluster(spec, progress=print)
    cluster.start()
    try:
        client = cluster.client()
        plan = _workload(args.jobs, args.seed)
        started = time.monotonic()
        ids = []
        for offset, nodes, run, limit in plan:
            time.sleep(max(0.0, offset - (time.monotonic() - started)))
            ids.append(client.submit(["sleep", str(run)], num_nodes=nodes, time_limit=limit,
                                     name=f"wi{len(ids)}"))
        while True:
            jobs = {j.job_id: j for j in client.jobs() if j.job_id in ids}
            if len(jobs) == len(ids) and all(j.end_time for j in jobs.values()):
                break
            time.sleep(2)
        _compare(plan, [jobs[i] for i in ids])
    finally:
        print(f"stopping the cluster: {cluster.stop()} processes")


def _compare(plan, slurm_jobs) -> None:
    t0 = min(j.submit_time for j in slurm_jobs).timestamp()
    jobs = [Job(id=j.job_id, submit=j.submit_time.timestamp() - t0,
                start=j.start_time.timestamp() - t0, end=j.end_time.timestamp() - t0,
                nodes=j.num_nodes, timelimit=60.0 * (j.time_limit or 0))
            for j in slurm_jobs]
    order = sorted(range(len(jobs)), key=lambda i: (jobs[i].submit, jobs[i].id))
    jobs = [jobs[i] for i in order]
    result = replay(jobs, HyperX((2, 2), 4), "row", model=IDEAL)
    diffs = []
    print(f"{'job':>6} {'nodes':>5} {'submit':>7} {'run':>5} {'limit':>5} "
          f"{'slurm start':>11} {'replay start':>12} {'diff':>6}")
    for j, start in zip(jobs, result.starts.tolist(), strict=True):
        diffs.append(start - j.start)
        print(f"{j.id:>6} {j.nodes:>5} {j.submit:7.0f} {j.runtime:5.0f} {j.timelimit:5.0f} "
              f"{j.start:11.0f} {start:12.0f} {start - j.start:+6.0f}")
    d = np.abs(np.array(diffs))
    waited = sum(1 for j in jobs if j.start > j.submit + 1)
    print(f"{len(jobs)} jobs ({waited} waited > 1 s in Slurm): start times equal within 1 s "
          f"for {int((d <= 1).sum())}, within 5 s for {int((d <= 5).sum())}; "
          f"mean |diff| {d.mean():.1f} s, max {d.max():.0f} s")


if __name__ == "__main__":
    main()
