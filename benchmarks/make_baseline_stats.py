"""Reference statistics of the simulator for the equivalence test.

Runs every configuration of :data:`CONFIGS` over :data:`SEEDS` and writes, per
configuration, the per-seed throughput, mean latency and makespan (and the
background's throughput where there is one) to a JSON file.  The fixture
``tests/simulation/engine/baseline_stats.json`` was produced by running this
script on the straightforward engine *before* the event-driven rewrite (commit
d4fd27d: every head re-routed every cycle) with ``straightforward_engine.patch``
applied, which gives it today's model: the random allocator's uniformly random
visiting order of ports and VCs (engine 2.0) and the tie rule of engine 2.1
(lowest cost, then flow control, then a random choice among the tied
candidates that can take the packet)::

    git worktree add /tmp/speedbase d4fd27d
    git -C /tmp/speedbase apply "$PWD/benchmarks/straightforward_engine.patch"
    cp benchmarks/make_baseline_stats.py /tmp/speedbase/benchmarks/
    cd /tmp/speedbase && python benchmarks/make_baseline_stats.py \
        "$OLDPWD/tests/simulation/engine/baseline_stats.json"

``tests/simulation/engine/test_equivalence.py`` imports :data:`CONFIGS` and
:func:`measure` from this file, so both sides run the very same workloads.

Usage: python benchmarks/make_baseline_stats.py OUT.json [--only NAME ...]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from simulation.engine import SimConfig, simulate
from simulation.engine.scenarios import build_partitions

SEEDS = tuple(range(20))

_SMALL = {"sides": (4, 4), "concentration": 4, "ranks": 64}
_OPEN = {"max_cycles": 4000, "warmup_cycles": 1000, "pattern": "uniform"}
_REF = {"sides": (8, 8), "concentration": 8}

#: name -> (SimConfig keyword arguments without the seed, partition kind, exact)
#: partition kind ``all``: every endpoint in rank order; ``stride``: every
#: 4th endpoint (16 ranks, one per switch of a 4 x 4); ``diagonal``: the
#: allocator's static partition (policy diagonal) of the 8 x 8 machine;
#: ``quarters``: four disjoint blocks of 16.  ``exact`` marks workloads that
#: draw no random number in the cycle loop (DOR, round-robin allocator,
#: closed-loop kernels): their results must stay bit-identical.
CONFIGS: dict[str, tuple[dict[str, Any], str, bool]] = {
    "uniform_0.3_min": ({**_SMALL, **_OPEN, "rate": 0.3, "routing": "min"}, "all", False),
    "uniform_0.9_min": ({**_SMALL, **_OPEN, "rate": 0.9, "routing": "min"}, "all", False),
    "uniform_0.3_omniwar": ({**_SMALL, **_OPEN, "rate": 0.3, "routing": "omniwar"}, "all", False),
    "uniform_0.9_omniwar": ({**_SMALL, **_OPEN, "rate": 0.9, "routing": "omniwar"}, "all", False),
    "uniform_0.6_dor": ({**_SMALL, **_OPEN, "rate": 0.6, "routing": "dor"}, "all", False),
    "uniform_0.4_valiant": ({**_SMALL, **_OPEN, "rate": 0.4, "routing": "valiant"}, "all",
                            False),
    "switchperm_1.0_omniwar_fallback": (
        {**_SMALL, **_OPEN, "pattern": "switch_permutation", "rate": 1.0,
         "routing": "omniwar", "port_choice": "fallback", "occupancy": "vc"}, "all", False),
    "uniform_0.8_min_rr": ({**_SMALL, **_OPEN, "rate": 0.8, "routing": "min",
                            "allocator": "round_robin"}, "all", False),
    "all2all_dor_rr": ({**_SMALL, "ranks": 16, "pattern": "all2all", "message_packets": 3,
                        "routing": "dor", "allocator": "round_robin", "max_cycles": 100_000},
                       "stride", True),
    "allreduce_dor_rr": ({**_SMALL, "ranks": 16, "pattern": "allreduce", "message_packets": 8,
                          "routing": "dor", "allocator": "round_robin",
                          "max_cycles": 100_000}, "stride", True),
    "escalation_all2all_min": ({**_SMALL, "ranks": 16, "replicas": 4, "scenario": "escalation",
                                "pattern": "all2all", "message_packets": 2, "routing": "min",
                                "max_cycles": 100_000}, "quarters", False),
    "interference_all2all_omniwar": (
        {**_REF, "ranks": 64, "scenario": "interference", "pattern": "all2all",
         "policy": "diagonal", "message_packets": 1, "background_rate": 1.0,
         "routing": "omniwar", "max_cycles": 200_000}, "diagonal", False),
    "interference_stencil4_omniwar": (
        {**_REF, "ranks": 64, "scenario": "interference", "pattern": "stencil4",
         "policy": "diagonal", "message_packets": 4, "background_rate": 1.0,
         "routing": "omniwar", "max_cycles": 200_000}, "diagonal", False),
}


def partitions(kind: str, cfg: SimConfig) -> list[np.ndarray]:
    """Partitions of a configuration (see :data:`CONFIGS`)."""
    if kind == "all":
        return [np.arange(cfg.endpoints)]
    if kind == "stride":
        return [np.arange(cfg.ranks) * (cfg.endpoints // cfg.ranks)]
    if kind == "quarters":
        return [np.arange(cfg.ranks * i, cfg.ranks * (i + 1)) for i in range(cfg.replicas)]
    if kind == "diagonal":  # the allocator's static partition (config.policy)
        return build_partitions(cfg)
    raise ValueError(kind)


def measure(name: str, seed: int) -> dict[str, float | None]:
    """Throughput, mean latency, makespan (and background throughput) of one run."""
    kw, kind, _ = CONFIGS[name]
    cfg = SimConfig(**kw, seed=seed)
    res = simulate(cfg, partitions(kind, cfg))
    out: dict[str, float | None] = {
        "throughput": res.throughput,
        "latency": res.latency_mean,
        "makespan": None if res.makespan_cycles is None else float(res.makespan_cycles),
        "phit_hops": float(res.phit_hops),
    }
    bg = [a for a in res.apps if a.role == "background"]
    if bg:
        out["background_throughput"] = bg[0].throughput
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args()
    names = args.only or list(CONFIGS)
    data: dict[str, Any] = {"seeds": list(SEEDS), "configs": {}}
    for name in names:
        t0 = time.perf_counter()
        runs = [measure(name, s) for s in SEEDS]
        stats = {k: [r[k] for r in runs] for k in runs[0]}
        data["configs"][name] = {"exact": CONFIGS[name][2], "values": stats}
        print(f"{name}: {time.perf_counter() - t0:.1f} s", flush=True)
    Path(args.out).write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    main()
