"""Bit-identity of the engine across refactors that must not change a run.

Performance work on the cycle loop (incremental occupancy counters, shared
cost caches, memory layout) must leave every run exactly as it was: the same
seed gives the same random draws in the same order, hence the same
:class:`~simulation.engine.SimResult`.  ``exact_refactor.json`` holds the full
result dicts of the configurations below (``python
tests/simulation/engine/test_exact_refactor.py --record``), last recorded when
a packet's random choice became one among the tied lowest-cost candidates that
can take it (engine 2.1), again when a stencil's longer side became its
first coordinate (engine 2.2: only the new non-square stencil case changed),
and when a check call came to decide the failures whose lowest cost it knows
(engine 2.3: only the four Omni-WAR cases that wait for the best port changed,
the draws a failing full evaluation makes being skipped), and when it came to
decide those whose tied ports all got dearer but stay below a bound on the
others (engine 2.4: the same four cases changed, for the same reason).
A change that alters the model *on purpose* must re-record the fixture and
say so; :mod:`test_equivalence` then checks the law against the old engine.

The workloads are short on purpose (a few seconds in all) but cover every
routing (DOR, MIN, Valiant, Omni-WAR with wait and fallback), both cost
modes, both allocators, open loop at low and high load, closed-loop kernels,
the escalation and interference scenarios and per-partition VC sets.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from simulation.engine import SimConfig, simulate
from simulation.engine import loop as engine_loop
from simulation.engine.scenarios import build_partitions

FIXTURE = Path(__file__).with_name("exact_refactor.json")

_SMALL = {"sides": (4, 4), "concentration": 4, "ranks": 64}
_OPEN = {"max_cycles": 1500, "warmup_cycles": 300, "pattern": "uniform"}
_REF = {"sides": (8, 8), "concentration": 8}

#: name -> (SimConfig keyword arguments, partition kind)
CASES: dict[str, tuple[dict[str, Any], str]] = {
    "uniform_0.3_min": ({**_SMALL, **_OPEN, "rate": 0.3, "routing": "min", "seed": 3}, "all"),
    "uniform_0.9_min": ({**_SMALL, **_OPEN, "rate": 0.9, "routing": "min", "seed": 4}, "all"),
    "uniform_0.9_min_vc": ({**_SMALL, **_OPEN, "rate": 0.9, "routing": "min",
                            "occupancy": "vc", "seed": 5}, "all"),
    "uniform_0.5_omniwar": ({**_SMALL, **_OPEN, "rate": 0.5, "routing": "omniwar",
                             "seed": 6}, "all"),
    "uniform_1.0_omniwar": ({**_SMALL, **_OPEN, "rate": 1.0, "routing": "omniwar",
                             "seed": 7}, "all"),
    "uniform_0.6_dor": ({**_SMALL, **_OPEN, "rate": 0.6, "routing": "dor", "seed": 8}, "all"),
    "uniform_0.4_valiant": ({**_SMALL, **_OPEN, "rate": 0.4, "routing": "valiant",
                             "seed": 9}, "all"),
    "switchperm_omniwar_fallback": ({**_SMALL, **_OPEN, "pattern": "switch_permutation",
                                     "rate": 1.0, "routing": "omniwar",
                                     "port_choice": "fallback", "occupancy": "vc",
                                     "seed": 10}, "all"),
    "uniform_0.8_min_fallback_portvc": ({**_SMALL, **_OPEN, "rate": 0.8, "routing": "min",
                                         "port_choice": "fallback", "seed": 11}, "all"),
    "uniform_0.8_min_rr": ({**_SMALL, **_OPEN, "rate": 0.8, "routing": "min",
                            "allocator": "round_robin", "seed": 12}, "all"),
    "ref_8x8_0.5_min": ({**_REF, "ranks": 512, "max_cycles": 800, "warmup_cycles": 200,
                         "pattern": "uniform", "rate": 0.5, "routing": "min", "seed": 1},
                        "all"),
    "all2all_dor_rr": ({**_SMALL, "ranks": 16, "pattern": "all2all", "message_packets": 3,
                        "routing": "dor", "allocator": "round_robin", "max_cycles": 100_000,
                        "seed": 13}, "stride"),
    "allreduce_min": ({**_SMALL, "ranks": 16, "pattern": "allreduce", "message_packets": 4,
                       "routing": "min", "max_cycles": 100_000, "seed": 14}, "stride"),
    "escalation_all2all_min": ({**_SMALL, "ranks": 16, "replicas": 4, "scenario": "escalation",
                                "pattern": "all2all", "message_packets": 2, "routing": "min",
                                "vc_sets": "per_partition", "max_cycles": 100_000,
                                "seed": 15}, "quarters"),
    "interference_stencil4_omniwar": ({**_REF, "ranks": 64, "scenario": "interference",
                                       "pattern": "stencil4", "policy": "diagonal",
                                       "message_packets": 1, "background_rate": 1.0,
                                       "routing": "omniwar", "max_cycles": 200_000,
                                       "seed": 16}, "diagonal"),
    "interference_stencil8_128_omniwar": ({**_REF, "ranks": 128, "scenario": "interference",
                                           "pattern": "stencil8", "policy": "diagonal",
                                           "message_packets": 1, "background_rate": 1.0,
                                           "routing": "omniwar", "max_cycles": 200_000,
                                           "seed": 18}, "diagonal"),
    "interference_all2all_valiant": ({**_SMALL, "ranks": 16, "scenario": "interference",
                                      "pattern": "all2all", "policy": "diagonal",
                                      "message_packets": 1, "background_rate": 0.7,
                                      "routing": "valiant", "max_cycles": 200_000,
                                      "seed": 17}, "diagonal"),
}


def _partitions(kind: str, cfg: SimConfig) -> list[np.ndarray]:
    if kind == "all":
        return [np.arange(cfg.endpoints)]
    if kind == "stride":
        return [np.arange(cfg.ranks) * (cfg.endpoints // cfg.ranks)]
    if kind == "quarters":
        return [np.arange(cfg.ranks * i, cfg.ranks * (i + 1)) for i in range(cfg.replicas)]
    return build_partitions(cfg)  # diagonal: the allocator's static partition


def result_dict(name: str) -> dict[str, Any]:
    """The full result dict of case ``name``, JSON round-tripped (tuples as lists).

    The per-link utilisation (hundreds of links) is kept as a SHA-256 of its
    exact JSON text so that the fixture stays small.
    """
    kw, kind = CASES[name]
    cfg = SimConfig(**kw)
    res = json.loads(json.dumps(simulate(cfg, _partitions(kind, cfg)).as_dict()))
    links = json.dumps(res["link_utilisation"]).encode()
    res["link_utilisation"] = hashlib.sha256(links).hexdigest()
    return res


def _same(a: Any, b: Any) -> bool:
    """Equality with floats compared exactly but NaN equal to NaN."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def test_fixture_covers_every_case() -> None:
    assert set(json.loads(FIXTURE.read_text())) == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_bit_identical(name: str) -> None:
    expected = json.loads(FIXTURE.read_text())[name]
    got = result_dict(name)
    if not _same(got, expected):
        diff = {k: (got.get(k), expected.get(k)) for k in expected
                if not _same(got.get(k), expected[k])}
        pytest.fail(f"{name}: result changed: {diff}")


@pytest.mark.parametrize("name", ["uniform_1.0_omniwar", "ref_8x8_0.5_min", "all2all_dor_rr",
                                  "interference_stencil4_omniwar"])
def test_bit_identical_with_prefetching(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The prefetches a large machine issues (every case here is below the
    size that turns them on) change no result."""
    monkeypatch.setattr(engine_loop, "PREFETCH_MIN_VCS", 0)
    assert _same(result_dict(name), json.loads(FIXTURE.read_text())[name])


if __name__ == "__main__":
    if sys.argv[1:] != ["--record"]:
        sys.exit("usage: test_exact_refactor.py --record")
    FIXTURE.write_text(json.dumps({n: result_dict(n) for n in sorted(CASES)}, indent=1) + "\n")
