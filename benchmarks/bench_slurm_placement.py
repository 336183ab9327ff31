"""Slurm's own placement on a half-full machine: topology groupings against the portal.

Usage: .venv/bin/python benchmarks/bench_slurm_placement.py [--seeds 5]
       [--sizes 8,16,32,64,128] [--kinds tree,tree-diagonal,tree-nested]
       [--policies row,diagonal,...] [--switches-wait 20] [--volume-divisor 2]
       [--max-cycles 300000] [--no-simulate] [--json FILE] [--model]

The demo machine (8x8 switches, c = 8, hx001..hx512, as ``hx_demo``) runs as a
real local Slurm 22.05 cluster (``allocation.slurm.LocalCluster``, select/linear,
topology/tree), started once per topology kind. For every seed:

1. a background that holds half the machine (``background``: a seeded churn of
   jobs of mixed sizes placed first-fit in node order, as select/linear does
   without a topology, then random departures) is pinned with ``sbatch -w``,
   identical for every kind;
2. plain ``sbatch -N n`` jobs of each size are submitted one at a time; each
   placement is read back from ``squeue --json`` and the job cancelled, so every
   size sees the same occupancy. With the row tree, the same jobs are also
   submitted with ``--switches=<n/c>@<wait>`` (whole switches, waiting at most
   ``--switches-wait`` seconds; SchedulerParameters retries every 2 s);
3. the portal's online policies place the same sizes on the same occupancy.

Each placement gets its partition properties (exact partition bandwidth, switch
locality, switches used, switches shared with the background) and the simulated
completion of an all-to-all of its nodes (ranks in hostlist order) while every
background node sends a random permutation at full rate (the recommendations'
``background`` scenario, Omni-WAR, 4 shared VCs). To keep the run short on a
shared host the all-to-all moves 1/``--volume-divisor`` of the study's volume
(1/2 by default) and stops at ``--max-cycles``; identical placements are
simulated once. It also checks that ``allocation.slurm_bestfit`` predicts every
plain-``sbatch`` placement. Times are shown as cycles and as the ratio to the row tree on
the same seed (paired); means with 95 % t-intervals over seeds.

``--model`` takes Slurm's placements from that model instead of a running
slurmctld (no root; for trying groupings on many seeds). Otherwise it needs
root and Debian's slurmctld, slurmd, slurm-client and munge (exit 2
without). State goes under ``$HX_DATA_DIR`` (else /tmp); ports come from
``HX_SLURM_TEST_PORTS`` (default 22000-31000). Every cluster is stopped.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from allocation.hyperx import HyperX, allocate, partition_properties  # noqa: E402
from allocation.slurm import ClusterSpec, LocalCluster, SlurmClient, SlurmError  # noqa: E402
from allocation.slurm.local import find_free_base_port  # noqa: E402
from allocation.slurm_bestfit import best_fit, parse_tree  # noqa: E402
from allocation.slurm_topology import TREE_KINDS, render  # noqa: E402

SIDES, C = (8, 8), 8
HOSTS = tuple(f"hx{i:03d}" for i in range(1, 513))
SLEEP = ["sleep", "100000"]
#: Background job sizes (nodes), drawn uniformly: many small jobs, some large.
MIX = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
POLICIES = ("row", "diagonal", "full_spread", "rectangular", "l_shape", "random_switch",
            "random_endpoint", "least_loaded_diagonal")
REFERENCE = "slurm tree"


# ------------------------------------------------------------------ occupancy (pure)
def background(seed: int, n: int = len(HOSTS), fill: float = 0.9,
               target: float = 0.5) -> list[list[int]]:
    """Jobs (endpoint lists) holding just over ``target`` of the machine: jobs of
    :data:`MIX` sizes (small ones more often) arrive first-fit in node order until
    ``fill`` is held, then jobs leave in random order, each one only if the
    machine stays at least ``target`` full."""
    rng = np.random.default_rng(seed)
    weights = 1 / np.sqrt(np.asarray(MIX, dtype=float))
    free = np.ones(n, dtype=bool)
    jobs: list[list[int]] = []
    while (~free).sum() < fill * n:
        size = int(rng.choice(MIX, p=weights / weights.sum()))
        if size > free.sum():
            break
        nodes = np.flatnonzero(free)[:size]
        free[nodes] = False
        jobs.append(nodes.tolist())
    held = sum(len(j) for j in jobs)
    gone = set()
    for i in rng.permutation(len(jobs)):
        if held - len(jobs[i]) >= target * n:
            gone.add(int(i))
            held -= len(jobs[i])
    return [j for i, j in enumerate(jobs) if i not in gone]


def endpoint(host: str) -> int:
    return int(host[2:]) - 1


# ------------------------------------------------------------------ Slurm side
@dataclass
class Placement:
    variant: str
    seed: int
    size: int
    endpoints: list[int]
    waited_s: float = 0.0
    extra: dict = field(default_factory=dict)


def wait(predicate, timeout: float, what: str, interval: float = 0.3):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


def running(client: SlurmClient, job_id: int):
    job = client.job(job_id)
    return job if job is not None and job.state == "RUNNING" else None


def gone(client: SlurmClient, ids: set[int], hosts: set[str] | None = None) -> bool:
    """The jobs have ended and their nodes (``hosts``; None: every node) are idle."""
    active = {j.job_id for j in client.jobs() if j.active or j.pending}
    if active & ids:
        return False
    return all(node.idle for node in client.nodes() if hosts is None or node.name in hosts)


def sbatch(client: SlurmClient, size: int, switches: str | None = None) -> int:
    args = ["--parsable", "--job-name=probe", "--output=/dev/null", "--chdir=/tmp",
            f"--nodes={size}"]
    if switches:
        args.append(f"--switches={switches}")
    args.append("--wrap=" + " ".join(SLEEP))
    return int(client.run("sbatch", *args).strip().split(";", 1)[0])


def measure_kind(kind: str, seeds: list[int], sizes: list[int], switches_wait: int,
                 data_dir: str, ports: tuple[int, int]) -> list[Placement]:
    state = tempfile.mkdtemp(prefix=f"place-{kind}-", dir=data_dir)
    os.chmod(state, 0o755)  # noqa: S103  # munged wants a searchable path
    spec = ClusterSpec(machine="hxbench", sides=SIDES, concentration=C, hostnames=HOSTS,
                       state_dir=state, topology=kind,
                       base_port=find_free_base_port(len(HOSTS), *ports, accounting=False),
                       scheduler_parameters="sched_interval=2,bf_interval=2")
    cluster = LocalCluster(spec, progress=lambda line: print(f"    {line}", flush=True))
    out: list[Placement] = []
    try:
        cluster.start()
        client = cluster.client(timeout=60)
        for seed in seeds:
            out += _measure_seed(client, kind, seed, sizes, switches_wait)
    finally:
        cluster.purge()
    return out


def _measure_seed(client: SlurmClient, kind: str, seed: int, sizes: list[int],
                  switches_wait: int) -> list[Placement]:
    held = background(seed)
    ids = {client.submit(SLEEP, nodes=[HOSTS[e] for e in job], name="background")
           for job in held}
    wait(lambda: all(j.state == "RUNNING" for j in client.jobs() if j.job_id in ids),
         120, "the background to run")
    out = []
    variants = [(f"slurm {kind}", None)]
    if kind == "tree":
        variants.append(("slurm tree --switches", "x"))
    for size in sizes:
        for variant, switches in variants:
            k = math.ceil(size / C)
            started = time.monotonic()
            job_id = sbatch(client, size, f"{k}@0:{switches_wait}" if switches else None)
            job = wait(lambda j=job_id: running(client, j), switches_wait + 90,
                       f"{variant} job of {size} nodes")
            waited = time.monotonic() - started
            eps = sorted(endpoint(h) for h in job.nodes)
            leaves = len({e // C for e in eps})
            extra = {"leaf_switches": leaves, "asked_switches": k} if switches else {}
            out.append(Placement(variant, seed, size, eps, round(waited, 1), extra))
            client.cancel(job_id)
            wait(lambda j=job_id, h=set(job.nodes): gone(client, {j}, h), 60,
                 "the probe to end")
            print(f"    seed {seed} {variant} n={size}: {len(set(e // C for e in eps))} "
                  f"switches, {waited:.1f} s", flush=True)
    for job_id in ids:
        client.cancel(job_id)
    wait(lambda: gone(client, ids), 120, "the background to end")
    return out


def model_placements(kinds: list[str], seeds: list[int], sizes: list[int]) -> list[Placement]:
    """``--model``: the Slurm placements from ``allocation.slurm_bestfit`` instead of
    a running slurmctld (no root needed; for trying groupings on many seeds)."""
    out = []
    for kind in kinds:
        tree = parse_tree(render(kind, "hxbench", SIDES, C, HOSTS))
        for seed in seeds:
            held = {e for job in background(seed) for e in job}
            free = [h for i, h in enumerate(HOSTS) if i not in held]
            for size in sizes:
                nodes = best_fit(tree, free, size) or []
                out.append(Placement(f"slurm {kind}", seed, size,
                                     sorted(endpoint(h) for h in nodes)))
    return out


# ------------------------------------------------------------------ portal side
def portal_placements(seeds: list[int], sizes: list[int], policies: list[str]) -> list[Placement]:
    hx = HyperX(SIDES, C)
    out = []
    for seed in seeds:
        busy = np.zeros(hx.n_endpoints, dtype=bool)
        for job in background(seed):
            busy[job] = True
        for size in sizes:
            for policy in policies:
                eps = allocate(hx, ~busy, policy, size, seed=seed, busy=busy)
                out.append(Placement(f"portal {policy}", seed, size, sorted(eps.tolist())))
    return out


def model_agreement(placements: list[Placement]) -> tuple[int, int]:
    """(agreeing, total): plain-sbatch placements that ``allocation.slurm_bestfit``
    predicts exactly from the grouping and the occupancy."""
    agree = total = 0
    for p in placements:
        if not p.variant.startswith("slurm ") or "--switches" in p.variant:
            continue
        tree = parse_tree(render(p.variant.split()[1], "hxbench", SIDES, C, HOSTS))
        held = {e for job in background(p.seed) for e in job}
        free = [h for i, h in enumerate(HOSTS) if i not in held]
        total += 1
        agree += best_fit(tree, free, p.size) == [HOSTS[e] for e in p.endpoints]
    return agree, total


# ------------------------------------------------------------------ evaluation
def evaluate(placements: list[Placement], simulate_it: bool, divisor: int,
             max_cycles: int) -> None:
    from simulation.engine import SimConfig, simulate
    from simulation.engine.config import study_message_packets

    hx = HyperX(SIDES, C)
    cache: dict[tuple, dict] = {}
    started = time.monotonic()
    for i, p in enumerate(placements):
        key = (p.seed, tuple(p.endpoints))
        if key not in cache:
            props = partition_properties(hx, p.endpoints, exact=True)
            held = np.zeros(hx.n_endpoints, dtype=bool)
            for job in background(p.seed):
                held[job] = True
            switches = np.unique(np.asarray(p.endpoints) // C)
            shared = int(held.reshape(-1, C)[switches].any(axis=1).sum())
            metrics = {"pb": props.pb_exact, "locality": props.switch_locality,
                       "switches": props.switches, "shared": shared,
                       "distance": props.avg_distance}
            if simulate_it:
                volume = max(1, study_message_packets("all2all", p.size) // divisor)
                config = SimConfig(sides=SIDES, concentration=C, routing="omniwar", vcs=4,
                                   vc_sets="shared", scenario="background", pattern="all2all",
                                   ranks=p.size, seed=0, max_cycles=max_cycles,
                                   message_packets=volume)
                result = simulate(config, [np.asarray(p.endpoints), np.flatnonzero(held)])
                app = result.apps[0]
                metrics["cycles"] = app.completion_cycles if result.completed else max_cycles
                metrics["completed"] = bool(result.completed)
            cache[key] = metrics
        p.extra.update(cache[key])
        if (i + 1) % 25 == 0:
            print(f"    evaluated {i + 1}/{len(placements)} ({len(cache)} distinct, "
                  f"{time.monotonic() - started:.0f} s)", flush=True)


def interval(values: list[float]) -> tuple[float, float]:
    """Mean and 95 % t half-width (nan for one value)."""
    from scipy.stats import t

    a = np.asarray(values, dtype=float)
    if a.size < 2:
        return float(a.mean()), math.nan
    return float(a.mean()), float(t.ppf(0.975, a.size - 1) * a.std(ddof=1) / math.sqrt(a.size))


def fmt(values: list[float], digits: int = 2) -> str:
    mean, half = interval(values)
    if math.isinf(mean):
        return "∞"
    return f"{mean:.{digits}f} ± {half:.{digits}f}" if math.isfinite(half) else f"{mean:.{digits}f}"


def table(placements: list[Placement], simulate_it: bool) -> list[dict]:
    reference = {(p.seed, p.size): p.extra.get("cycles") for p in placements
                 if p.variant == REFERENCE}
    variants = list(dict.fromkeys(p.variant for p in placements))
    rows = []
    for size in sorted({p.size for p in placements}):
        for variant in variants:
            group = [p for p in placements if p.variant == variant and p.size == size]
            row = {"size": size, "variant": variant, "n": len(group),
                   "pb": fmt([p.extra["pb"] for p in group]),
                   "locality": f"{100 * np.mean([p.extra['locality'] for p in group]):.0f} %",
                   "switches": fmt([p.extra["switches"] for p in group], 1),
                   "shared": fmt([p.extra["shared"] for p in group], 1),
                   "waited_s": f"{np.mean([p.waited_s for p in group]):.1f}"}
            if simulate_it:
                row["cycles"] = fmt([p.extra["cycles"] for p in group], 0)
                ratios = [p.extra["cycles"] / reference[(p.seed, p.size)] for p in group
                          if reference.get((p.seed, p.size))]
                row["vs_tree"] = fmt(ratios) if ratios else ""
                row["_ratios"] = ratios
            rows.append(row)
    return rows


def print_table(rows: list[dict], simulate_it: bool) -> None:
    head = "| nodes | placement | PB exact | switch locality | switches | shared with bg |"
    head += " cycles (all2all) | time / slurm tree | wait s |" if simulate_it else " wait s |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for r in rows:
        line = (f"| {r['size']} | {r['variant']} | {r['pb']} | {r['locality']} | "
                f"{r['switches']} | {r['shared']} |")
        line += (f" {r['cycles']} | {r['vs_tree']} | {r['waited_s']} |" if simulate_it
                 else f" {r['waited_s']} |")
        print(line)
    if simulate_it:
        print("\nGeometric mean over sizes and seeds of time / slurm tree:")
        for variant in dict.fromkeys(r["variant"] for r in rows):
            ratios = [x for r in rows if r["variant"] == variant for x in r["_ratios"]]
            logs = [math.log(x) for x in ratios]
            mean, half = interval(logs)
            print(f"  {variant:32s} {math.exp(mean):.3f}  "
                  f"[{math.exp(mean - half):.3f}, {math.exp(mean + half):.3f}]")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--sizes", default="8,16,32,64,128")
    parser.add_argument("--kinds", default="tree,tree-diagonal,tree-nested")
    parser.add_argument("--policies", default=",".join(POLICIES))
    parser.add_argument("--switches-wait", type=int, default=20)
    parser.add_argument("--volume-divisor", type=int, default=2)
    parser.add_argument("--max-cycles", type=int, default=300_000)
    parser.add_argument("--no-simulate", action="store_true")
    parser.add_argument("--json", help="write every placement and metric here")
    parser.add_argument("--model", action="store_true",
                        help="Slurm's placements from the best-fit model, no slurmctld "
                             "(no --switches row)")
    args = parser.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    if any(k not in TREE_KINDS for k in kinds) or "tree" not in kinds:
        parser.error(f"--kinds: from {', '.join(TREE_KINDS)}, including tree (the reference)")
    if not args.model and not all(shutil.which(b) or os.path.exists(f"/usr/sbin/{b}")
               for b in ("slurmctld", "slurmd", "sinfo", "munged")):
        print("slurmctld, slurmd, slurm-client and munge are needed", file=sys.stderr)
        return 2
    if not args.model and os.geteuid() != 0:
        print("the local Slurm cluster runs its daemons as root", file=sys.stderr)
        return 2
    seeds = list(range(args.seeds))
    sizes = [int(s) for s in args.sizes.split(",")]
    data_dir = os.environ.get("HX_DATA_DIR") or tempfile.gettempdir()
    os.makedirs(data_dir, exist_ok=True)
    ports = tuple(int(p) for p in os.environ.get("HX_SLURM_TEST_PORTS", "22000-31000")
                  .split("-", 1))
    started = time.monotonic()
    placements: list[Placement] = []
    for kind in [] if args.model else kinds:
        print(f"== slurm, topology {kind}", flush=True)
        try:
            placements += measure_kind(kind, seeds, sizes, args.switches_wait, data_dir, ports)
        except (SlurmError, RuntimeError) as exc:
            print(f"failed: {exc}", file=sys.stderr)
            return 1
    slurm_s = time.monotonic() - started
    if args.model:
        placements = model_placements(kinds, seeds, sizes)
    else:
        agree, total = model_agreement(placements)
        print(f"== the best-fit model (allocation/slurm_bestfit.py) predicts {agree}/{total} "
              "plain-sbatch placements exactly", flush=True)
    placements += portal_placements(seeds, sizes, [p for p in args.policies.split(",") if p])
    print(f"== evaluating {len(placements)} placements", flush=True)
    evaluate(placements, not args.no_simulate, args.volume_divisor, args.max_cycles)
    rows = table(placements, not args.no_simulate)
    print(f"\nDemo machine 8x8, c = 8, half held ({len(seeds)} seeds); all-to-all at "
          f"1/{args.volume_divisor} of the study's volume, Omni-WAR, background permutation; "
          f"Slurm part {slurm_s:.0f} s, total {time.monotonic() - started:.0f} s\n")
    print_table(rows, not args.no_simulate)
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"args": vars(args), "placements": [p.__dict__ for p in placements],
             "rows": [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows]},
            indent=1, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
