"""The reference study as a list of engine configurations (pure: no Django, no I/O).

The study of docs/domain.md section 6 on the 8 x 8, c = 8 HyperX (512 endpoints):

* the seven allocation policies;
* 64-, 128- and 256-rank applications of each kernel (``all2all``,
  ``allreduce``, ``stencil4``, ``stencil8``, ``random_involution``);
* *escalation*: 1 replica up to the full machine (8, 4 and 2 replicas);
* *interference*: one target application, every other endpoint sending a
  random permutation in the background at full load (the engine's default
  ``background_rate`` 1.0);
* routing ``min`` and ``omniwar``; ``shared`` and ``per_partition`` VCs.

The isolated figure of a kernel is its 1-replica escalation run (one
application alone on the machine, the same partition as the interference
target).

Every run uses the engine's faithful study mode at the study's kernel volume
(:func:`simulation.engine.config.study_message_packets`, about 16 Ki phits per
rank) times ``scale``, written out as ``message_packets`` in each
configuration, with a cycle limit of ``1_000_000 * scale`` (at most
``MAX_CYCLES``).
"""

from __future__ import annotations

from typing import Any

from allocation.hyperx.patterns import STUDY_KERNELS
from allocation.hyperx.policies import BASELINE_POLICY, POLICIES
from simulation.engine.config import study_message_packets

__all__ = ["BASELINE_POLICY", "STUDY_AXES", "STUDY_MACHINE", "study_configs", "study_size"]

STUDY_MACHINE = {"sides": [8, 8], "concentration": 8}
#: The seven policies of the study (docs/domain.md section 2.1), whatever else the engine
#: knows: the registry's policies with a static formula.
STUDY_POLICIES = POLICIES
STUDY_RANKS = (64, 128, 256)
STUDY_ROUTINGS = ("min", "omniwar")
STUDY_VC_SETS = ("shared", "per_partition")
MAX_SCALE = 64
#: Cycle limit of the largest scales (the portal's limit of one run).
MAX_CYCLES = 5_000_000
#: Keys that vary between the study's runs (the "point" of each run).
STUDY_AXES = ("scenario", "policy", "pattern", "ranks", "replicas", "routing", "vc_sets")


def study_configs(scale: int = 1) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """``(point, config)`` pairs of every run of the reference study.

    Parameters
    ----------
    scale : int
        Multiple of the study's kernel volume (1..64); ``max_cycles`` grows
        with it.

    Examples
    --------
    >>> items = study_configs()
    >>> len(items) == study_size()
    True
    >>> point, config = items[0]
    >>> point
    {'scenario': 'escalation', 'policy': 'row', 'pattern': 'all2all', 'ranks': 64, \
'replicas': 1, 'routing': 'min', 'vc_sets': 'shared'}
    >>> config["message_packets"], config["max_cycles"], config["sides"]
    (16, 1000000, [8, 8])
    >>> study_configs(scale=2)[0][1]["message_packets"]
    32
    """
    if isinstance(scale, bool) or not isinstance(scale, int) or not 1 <= scale <= MAX_SCALE:
        raise ValueError(f"scale must be an integer in 1..{MAX_SCALE}")
    endpoints = STUDY_MACHINE["sides"][0] * STUDY_MACHINE["sides"][1] * STUDY_MACHINE[
        "concentration"]
    base = {**STUDY_MACHINE, "max_cycles": min(MAX_CYCLES, 1_000_000 * scale), "seed": 0}
    out = []
    for scenario in ("escalation", "interference"):
        for policy in STUDY_POLICIES:
            for pattern in STUDY_KERNELS:
                for ranks in STUDY_RANKS:
                    replicas = range(1, endpoints // ranks + 1) if scenario == "escalation" \
                        else (1,)
                    for rep in replicas:
                        for routing in STUDY_ROUTINGS:
                            for vc_sets in STUDY_VC_SETS:
                                point = {"scenario": scenario, "policy": policy,
                                         "pattern": pattern, "ranks": ranks, "replicas": rep,
                                         "routing": routing, "vc_sets": vc_sets}
                                volume = scale * study_message_packets(pattern, ranks)
                                out.append((point, {**base, **point,
                                                    "message_packets": volume}))
    return out


def study_size() -> int:
    """Number of runs of the study (independent of ``scale``).

    >>> study_size()
    2380
    """
    per_kernel_policy = sum(512 // r for r in STUDY_RANKS) + len(STUDY_RANKS)
    return (len(STUDY_POLICIES) * len(STUDY_KERNELS) * per_kernel_policy
            * len(STUDY_ROUTINGS) * len(STUDY_VC_SETS))
