"""Does the calibration's aged machine place jobs where a real slurmctld does?

The calibration's occupancy (``recommendations.calibration.occupancy``) places every
other job with ``slurm_best_fit``, a model of Slurm's node selection without a
topology plugin read from its source. This checks that model against the real
thing: a local Slurm 22.05 cluster (``allocation.slurm.LocalCluster``, topology
none, ``--select`` cons_tres with whole-node ``--exclusive`` jobs, or linear) runs a
churn like the aged machine's: jobs sized by Lublin and Feitelson's law (on a
machine of an eighth of the nodes, as the calibration draws them) arrive while
fewer than ``--load`` of the nodes are held and end, one drawn at random, while as
many or more are. Before each arrival the model is asked where the job goes on the
nodes free at that moment (read from Slurm), and after it the job's nodes are read
back from ``squeue``. Prints each disagreement and the count of exact agreements.

Usage (root, Debian's Slurm): HX_SLURM_TEST_PORTS=20000-21999 .venv/bin/python \\
    benchmarks/slurm_best_fit_check.py [--sides 4,4] [--concentration 4] [--events 150]
    [--load 0.6] [--seed 1] [--select cons_tres|linear]
Exit 2 without root or Slurm's daemons; every cluster it starts is stopped.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from allocation.hyperx.job_sizes import lublin_sizes
from allocation.slurm import ClusterSpec, LocalCluster
from allocation.slurm.local import find_free_base_port
from recommendations.calibration.occupancy import slurm_best_fit

SLEEP = ["sleep", "100000"]


def wait(predicate, timeout: float, what: str, interval: float = 0.2):
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)
    return value


def submit(client, size: int, select: str) -> int:
    args = ["--parsable", "--job-name=fit", "--output=/dev/null", "--chdir=/tmp",
            f"--nodes={size}", *(["--exclusive"] if select == "cons_tres" else []),
            "--wrap=" + " ".join(SLEEP)]
    return int(client.run("sbatch", *args).strip().split(";", 1)[0])


def churn(client, hosts: list[str], events: int, load: float, seed: int,
          select: str) -> tuple[int, int, list[str]]:
    """(placements that agree, placements, a line per disagreement)."""
    index = {h: i for i, h in enumerate(hosts)}
    rng = np.random.default_rng(seed)
    sizes = iter(lublin_sizes(rng, 10 * events, max(len(hosts) // 8, 1)).tolist())
    running: dict[int, list[int]] = {}
    agree, placed, lines = 0, 0, []
    for _ in range(events):
        held = sum(len(v) for v in running.values())
        if held < load * len(hosts) or not running:
            free = np.ones(len(hosts), dtype=bool)
            for nodes in running.values():
                free[nodes] = False
            size = min(next(sizes), int(free.sum()))
            model = slurm_best_fit(free, size).tolist()
            job_id = submit(client, size, select)
            job = wait(lambda j=job_id: (lambda r: r if r and r.state == "RUNNING" else None)(
                client.job(j)), 60, f"job {job_id} to run")
            got = sorted(index[h] for h in job.nodes)
            running[job_id] = got
            placed += 1
            if got == sorted(model):
                agree += 1
            else:
                lines.append(f"{size:>4} nodes on {int(free.sum())} free: slurm "
                             f"{_runs(got)}, model {_runs(sorted(model))}")
        else:
            job_id = list(running)[int(rng.integers(len(running)))]
            nodes = {hosts[i] for i in running.pop(job_id)}
            client.cancel(job_id)
            wait(lambda n=nodes: all(node.idle for node in client.nodes() if node.name in n),
                 60, f"the nodes of job {job_id} to be idle")
    return agree, placed, lines


def _runs(ids: list[int]) -> str:
    """Endpoint ids as ranges: 0-3,8,10-11."""
    parts, start = [], None
    for i, e in enumerate(ids):
        if start is None:
            start = e
        if i + 1 == len(ids) or ids[i + 1] != e + 1:
            parts.append(f"{start}" if start == e else f"{start}-{e}")
            start = None
    return ",".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sides", default="4,4")
    parser.add_argument("--concentration", type=int, default=4)
    parser.add_argument("--events", type=int, default=150)
    parser.add_argument("--load", type=float, default=0.6)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--select", choices=("cons_tres", "linear"), default="cons_tres")
    args = parser.parse_args()
    if not all(shutil.which(b) or os.path.exists(f"/usr/sbin/{b}")
               for b in ("slurmctld", "slurmd", "sinfo", "munged")):
        print("slurmctld, slurmd, slurm-client and munge are needed", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("the local Slurm cluster runs its daemons as root", file=sys.stderr)
        return 2
    sides = tuple(int(s) for s in args.sides.split(","))
    n = int(np.prod(sides)) * args.concentration
    hosts = [f"fit{i:03d}" for i in range(1, n + 1)]
    low, high = (int(p) for p in os.environ.get("HX_SLURM_TEST_PORTS", "20000-21999")
                 .split("-", 1))
    data_dir = os.environ.get("HX_DATA_DIR") or tempfile.gettempdir()
    os.makedirs(data_dir, exist_ok=True)
    state = tempfile.mkdtemp(prefix="best-fit-", dir=data_dir)
    os.chmod(state, 0o755)  # noqa: S103  # munged wants a searchable path
    spec = ClusterSpec(machine="fit", sides=sides, concentration=args.concentration,
                       hostnames=tuple(hosts), state_dir=state, topology="none",
                       select=args.select, base_port=find_free_base_port(
                           n, low, high, accounting=False),
                       scheduler_parameters="sched_interval=1,bf_interval=1")
    cluster = LocalCluster(spec, progress=lambda line: print(f"    {line}", flush=True))
    started = time.monotonic()
    try:
        cluster.start()
        agree, placed, lines = churn(cluster.client(timeout=60), hosts, args.events,
                                     args.load, args.seed, args.select)
    finally:
        cluster.purge()
    for line in lines:
        print(line)
    print(f"select/{args.select}, {n} nodes ({args.sides} switches, c = {args.concentration}), "
          f"load {args.load:.0%}, seed {args.seed}: the model gives Slurm's nodes exactly for "
          f"{agree} of {placed} placements ({args.events} events, "
          f"{time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
