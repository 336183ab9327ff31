"""The tail of a loaded calibration point: when a job's packets arrive against its
injection bound, and whether the event-driven loop's wake-ups play a part.

At 75 % load (three quarters of the machine sending full-rate background) an
all-to-all's last packets arrive long after the bulk. This runs one calibration
point (the portal's configuration and synthetic occupancy) on a shape small
enough to repeat, at several seeds, and prints per seed the cycle its job ends, the
bound one phit a cycle per rank sets, and the cycles by which 50, 90, 99 and 99.9 %
of its packets were delivered; ``--locate`` adds, when two packets are left, where
they wait (input buffer, place in line, the head in front of them and how long it
has waited). With ``--straightforward DIR`` the same configuration and partitions
also run on the engine in DIR, a checkout of the straightforward loop (every head
re-routed every cycle; ``make_baseline_stats.py`` says how to build it), in a
subprocess: a seed draws another sample on each engine, so the two agree in law,
not run by run.

Usage: .venv/bin/python benchmarks/loaded_tail.py [--sides 8x8] [--concentration 8]
       [--size 64] [--load 0.75] [--policy random_endpoint] [--seeds 0,1,2]
       [--locate] [--straightforward DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _calibration_runs import point_run, setup_django

MILESTONES = (0.5, 0.9, 0.99, 0.999)
#: Run in the other checkout: the config's fields it knows, at each seed, one line each.
_OTHER = """
import dataclasses, json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from simulation.engine import SimConfig, simulate
d = json.load(open(sys.argv[2]))
known = {f.name for f in dataclasses.fields(SimConfig)}
kw = {k: tuple(v) if isinstance(v, list) else v for k, v in d["config"].items() if k in known}
for seed in d["seeds"]:
    r = simulate(SimConfig(**{**kw, "seed": seed}), [np.asarray(p) for p in d["partitions"]])
    print(json.dumps([seed, r.apps[0].completion_cycles]), flush=True)
"""


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sides", default="8x8")
    parser.add_argument("--concentration", type=int, default=8)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--load", type=float, default=0.75)
    parser.add_argument("--policy", default="random_endpoint")
    parser.add_argument("--seeds", default="0,1,2,3,4,5")
    parser.add_argument("--locate", action="store_true",
                        help="where the job's last two packets wait")
    parser.add_argument("--straightforward", default=None, metavar="DIR",
                        help="a checkout of the straightforward loop to run the same points on")
    return parser.parse_args()


def _point(args: argparse.Namespace):
    """The calibration point's shape, engine config, partitions and injection bound."""
    from allocation.hyperx import MachineShape
    from simulation.services import study_packets_per_rank

    shape = MachineShape(tuple(int(s) for s in args.sides.split("x")), args.concentration)
    cfg, parts = point_run(shape, "all2all", args.size, args.load, args.policy)
    bound = study_packets_per_rank("all2all", cfg.ranks) * cfg.packet_phits
    return shape, cfg, parts, bound


class _Watch:
    """Wraps the simulator's loop call (chunks of 200 cycles) to date the milestones
    and, with ``locate``, describe the job's packets when two are left."""

    def __init__(self, locate: bool) -> None:
        from simulation.engine import simulator

        self.engine, self.locate = simulator, locate
        self.reached: dict[float, int] = {}
        self.where: list[str] = []

    def __enter__(self) -> _Watch:
        self.call, self.work = self.engine._call_loop, self.engine._CHUNK_WORK
        self.engine._call_loop = self._calling
        return self

    def __exit__(self, *exc: object) -> None:
        self.engine._call_loop, self.engine._CHUNK_WORK = self.call, self.work

    def _calling(self, t, t1, cf, prm, net, tr, pool, state, ranks):
        status = self.call(t, t1, cf, prm, net, tr, pool, state, ranks)
        finite = tr.app_total > 0
        total = int(tr.app_total[finite].sum())
        done = int(ranks["app_stats"][finite, 2].sum())
        cycle = int(pool["st"][self.engine.L.S_CYCLE])
        for m in MILESTONES:
            if m not in self.reached and done >= m * total:
                self.reached[m] = cycle
        if self.locate and not self.where and total - done <= 2:
            self.where = _waiting(self.engine.L, pool, state, cycle)
        return status


def _waiting(L, pool: dict, state: dict, cycle: int) -> list[str]:
    """Where the job's (application 0's) packets in flight sit at ``cycle``."""
    pk, st = pool["pk"], pool["st"]
    free = set(pool["free_stack"][: int(st[L.S_FREE])].tolist())
    live = [p for p in range(pk.shape[0]) if p not in free and pk[p, L.F_APP] == 0]
    lines = [f"  at cycle {cycle:,}: {len(live)} of the job's packets in flight"]
    hq, head, in_q = state["hq"], state["head"], state["in_q"]
    for p in live:
        for ivc in range(hq.shape[0]):
            n, h = int(hq[ivc, L.Q_N]), int(hq[ivc, L.Q_H])
            ring = [int(in_q[ivc, (h + i) % in_q.shape[1]]) for i in range(n)]
            if p in ring:
                lines.append(
                    f"    packet {p} (to endpoint {int(pk[p, L.F_DST])}, {int(pk[p, L.F_HOPS])} "
                    f"hops) in input VC {ivc}, place {ring.index(p) + 1} of {n}, there "
                    f"{cycle - int(pk[p, L.F_READY]):,} cycles; its head there "
                    f"{cycle - int(hq[ivc, L.Q_RDY]):,} cycles, waiting for local ports "
                    f"mask {int(head[ivc, L.H_WATCH])} at cost {int(head[ivc, L.H_COST])}")
                break
        else:
            lines.append(f"    packet {p}: not in an input buffer (output or source queue)")
    return lines


def _straightforward(root: str, cfg, parts, seeds: list[int]) -> dict[int, int]:
    payload = {"config": cfg.to_dict(), "partitions": [p.tolist() for p in parts],
               "seeds": seeds}
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(payload, f)
        f.flush()
        out = subprocess.run([sys.executable, "-c", _OTHER, root, f.name], capture_output=True,
                             text=True, check=True, cwd=root).stdout
    return dict(json.loads(line) for line in out.splitlines() if line.startswith("["))


def main() -> None:
    args = _arguments()
    setup_django()
    from simulation.engine import simulate

    shape, cfg, parts, bound = _point(args)
    seeds = [int(s) for s in args.seeds.split(",")]
    print(f"# {shape.node_count:,} nodes ({args.sides}, c = {args.concentration}), all-to-all "
          f"of {args.size} ({cfg.ranks} ranks) at {args.load:.0%} load, {args.policy}: "
          f"injection bound {bound:,} cycles")
    ends = {}
    for seed in seeds:
        with _Watch(args.locate) as watch:
            watch.engine._CHUNK_WORK = 200 * (shape.node_count * 12)  # about 200-cycle chunks
            began = time.process_time()
            result = simulate(dataclasses.replace(cfg, seed=seed), parts)
        ends[seed] = result.apps[0].completion_cycles
        marks = ", ".join(f"{m:.1%} by {watch.reached.get(m, 0):,}" for m in MILESTONES)
        print(f"seed {seed}: ends at cycle {ends[seed]:,} ({ends[seed] / bound:.2f}x the bound); "
              f"{marks} ({time.process_time() - began:.1f} s CPU)")
        print("\n".join(watch.where))
    print(f"this engine: {min(ends.values()):,}-{max(ends.values()):,}, mean "
          f"{statistics.mean(ends.values()):,.0f}")
    if args.straightforward:
        other = _straightforward(args.straightforward, cfg, parts, seeds)
        print(f"the straightforward loop: {min(other.values()):,}-{max(other.values()):,}, "
              f"mean {statistics.mean(other.values()):,.0f} (seeds "
              f"{', '.join(f'{s}: {other[s]:,}' for s in seeds)})")


if __name__ == "__main__":
    main()
