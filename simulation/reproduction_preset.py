"""The reproduction sweep: the runs behind the reproduction report (pure: no Django, no I/O).

Three parts on the study's 8 x 8, c = 8 HyperX (512 endpoints), seven policies
each; every point records ``part``, ``scenario``, ``policy``, ``pattern``,
``ranks``, ``replicas``, ``routing`` and ``seed``:

* ``table4``: the published Table 4. Interference (one target, every other
  endpoint sending a random permutation in the background), Omni-WAR routing,
  shared VCs; the five kernels on 64 and 128 ranks; ``seeds`` seeds
  (0, 1, ...). Message volume and background rate stay at the engine's
  defaults, which are the study's.
* ``escalation_min``: escalation of 1, 2, 4 and 8 replicas of 64 ranks, MIN
  routing, static traffic (``uniform`` and ``permutation``, 64 packets per
  task at rate 1.0), the same seeds.
* ``interference_static``: interference with Omni-WAR and 64-rank
  ``uniform`` and ``switch_permutation`` targets (64 packets per task at
  rate 1.0), the same seeds.

The ordering parts ran on at most two seeds until 2026-12-06; two seeds give no
interval worth the name, so they now take the sweep's seeds like Table 4
(``reproduction_noise``), or more: their runs are short (70 a seed, as many as Table
4's, at about a sixtieth of the cost), and b2's verdict, open on 8 seeds, settles
only from 16 on (docs/domain.md 6.8), so ``ordering_seeds`` goes up to 32 while
Table 4 stops at 8. A sweep made before then is read with its own
ordering seeds (:func:`legacy_ordering_seeds`).
"""

from __future__ import annotations

from typing import Any

from allocation.hyperx.patterns import (
    PERMUTATION,
    STUDY_KERNELS,
    SWITCH_PERMUTATION,
    UNIFORM,
)
from simulation.presets import STUDY_MACHINE, STUDY_POLICIES

__all__ = ["DEFAULT_SEEDS", "MAX_ORDERING_SEEDS", "MAX_SEEDS", "legacy_ordering_seeds",
           "ordering_configs", "reproduction_configs", "reproduction_size", "runs_per_seed"]

DEFAULT_SEEDS = 3
MAX_SEEDS = 8
MAX_ORDERING_SEEDS = 32
TABLE4_KERNELS = STUDY_KERNELS
TABLE4_RANKS = (64, 128)
ESCALATION_PATTERNS = (UNIFORM, PERMUTATION)
ESCALATION_REPLICAS = (1, 2, 4, 8)
INTERFERENCE_PATTERNS = (UNIFORM, SWITCH_PERMUTATION)
STATIC_RANKS = 64
STATIC_TRAFFIC = {"packets_per_task": 64, "rate": 1.0}


def _check_seeds(seeds: Any, field: str = "seeds", maximum: int = MAX_SEEDS) -> int:
    if isinstance(seeds, bool) or not isinstance(seeds, int) or not 1 <= seeds <= maximum:
        raise ValueError(f"{field} must be an integer in 1..{maximum}")
    return seeds


def _ordering_seeds(seeds: int, ordering_seeds: Any) -> int:
    """The ordering parts' seeds: ``seeds`` unless given (1..32)."""
    if ordering_seeds is None:
        return seeds
    return _check_seeds(ordering_seeds, "ordering_seeds", MAX_ORDERING_SEEDS)


def legacy_ordering_seeds(seeds: int) -> int:
    """The ordering parts' seeds of a sweep made before 2026-12-06 with ``seeds``.

    >>> legacy_ordering_seeds(1), legacy_ordering_seeds(8)
    (1, 2)
    """
    return min(_check_seeds(seeds), 2)


def reproduction_configs(seeds: int = DEFAULT_SEEDS, ordering_seeds: int | None = None,
                         ) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """``(point, config)`` pairs of every run of the reproduction sweep.

    Parameters
    ----------
    seeds : int
        Seeds of Table 4 (1..8), and of the ordering parts unless ``ordering_seeds``.
    ordering_seeds : int, optional
        Seeds of the two ordering parts (1..32) when not ``seeds``; a sweep made
        before 2026-12-06 had :func:`legacy_ordering_seeds`.

    Examples
    --------
    >>> items = reproduction_configs()
    >>> len(items) == reproduction_size() == 420
    True
    >>> point, config = items[0]
    >>> point
    {'part': 'table4', 'scenario': 'interference', 'policy': 'row', 'pattern': 'all2all', \
'ranks': 64, 'replicas': 1, 'routing': 'omniwar', 'seed': 0}
    >>> sorted(set(config) - set(point))
    ['concentration', 'sides', 'vc_sets']
    >>> reproduction_configs(0)
    Traceback (most recent call last):
    ...
    ValueError: seeds must be an integer in 1..8
    >>> reproduction_configs(8, ordering_seeds=33)
    Traceback (most recent call last):
    ...
    ValueError: ordering_seeds must be an integer in 1..32
    """
    seeds = _check_seeds(seeds)
    ordering = range(_ordering_seeds(seeds, ordering_seeds))
    runs = [*_table4_runs(range(seeds)), *_escalation_runs(ordering),
            *_interference_static_runs(ordering)]
    return [_point_and_config(part, fields, extra) for part, fields, extra in runs]


def ordering_configs(seeds: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """``(point, config)`` pairs of the two ordering parts on seeds ``0 .. seeds - 1``:
    the sweep's own runs for its ordering seeds and more (the sweep makes at most 32;
    ``benchmarks/ordering_seeds.py``).

    >>> items = ordering_configs(3)
    >>> len(items), sorted({p["seed"] for p, _ in items})
    (210, [0, 1, 2])
    >>> sweep = [run for run in reproduction_configs(2) if run[0]["part"] != "table4"]
    >>> sorted(map(str, ordering_configs(2))) == sorted(map(str, sweep))
    True
    """
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise ValueError("seeds must be a positive integer")
    runs = [*_escalation_runs(range(seeds)), *_interference_static_runs(range(seeds))]
    return [_point_and_config(part, fields, extra) for part, fields, extra in runs]


#: One run as the parts list it: its part, the fields that vary, the fixed traffic.
_Run = tuple[str, dict[str, Any], dict[str, Any]]


def _point_and_config(part: str, fields: dict[str, Any],
                      extra: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The run's point (every field, ``replicas`` 1 unless given) and its engine
    configuration (the study machine, shared VCs, the fields and the traffic)."""
    point = {"part": part, "scenario": fields["scenario"], "policy": fields["policy"],
             "pattern": fields["pattern"], "ranks": fields["ranks"],
             "replicas": fields.get("replicas", 1), "routing": fields["routing"],
             "seed": fields["seed"]}
    config = {"sides": list(STUDY_MACHINE["sides"]),
              "concentration": STUDY_MACHINE["concentration"], "vc_sets": "shared",
              **fields, **extra}
    return point, config


def _table4_runs(seeds: range) -> list[_Run]:
    return [("table4", {"scenario": "interference", "policy": policy, "pattern": pattern,
                        "ranks": ranks, "routing": "omniwar", "seed": seed}, {})
            for policy in STUDY_POLICIES for pattern in TABLE4_KERNELS
            for ranks in TABLE4_RANKS for seed in seeds]


def _escalation_runs(seeds: range) -> list[_Run]:
    return [("escalation_min", {"scenario": "escalation", "policy": policy,
                                "pattern": pattern, "ranks": STATIC_RANKS,
                                "replicas": replicas, "routing": "min", "seed": seed},
             STATIC_TRAFFIC)
            for policy in STUDY_POLICIES for pattern in ESCALATION_PATTERNS
            for replicas in ESCALATION_REPLICAS for seed in seeds]


def _interference_static_runs(seeds: range) -> list[_Run]:
    return [("interference_static", {"scenario": "interference", "policy": policy,
                                     "pattern": pattern, "ranks": STATIC_RANKS,
                                     "routing": "omniwar", "seed": seed}, STATIC_TRAFFIC)
            for policy in STUDY_POLICIES for pattern in INTERFERENCE_PATTERNS
            for seed in seeds]


def reproduction_size(seeds: int = DEFAULT_SEEDS, ordering_seeds: int | None = None) -> int:
    """Number of runs of the reproduction sweep.

    >>> reproduction_size(1), reproduction_size(3), reproduction_size(8)
    (140, 420, 1120)
    >>> reproduction_size(3, ordering_seeds=legacy_ordering_seeds(3))
    350
    >>> reproduction_size(8, ordering_seeds=32)
    2800
    """
    table4, ordering = runs_per_seed()
    seeds = _check_seeds(seeds)
    return seeds * table4 + _ordering_seeds(seeds, ordering_seeds) * ordering


def runs_per_seed() -> tuple[int, int]:
    """Runs each Table 4 seed and each ordering seed adds.

    >>> runs_per_seed()
    (70, 70)
    """
    n = len(STUDY_POLICIES)
    return (n * len(TABLE4_KERNELS) * len(TABLE4_RANKS),
            n * (len(ESCALATION_PATTERNS) * len(ESCALATION_REPLICAS)
                 + len(INTERFERENCE_PATTERNS)))
