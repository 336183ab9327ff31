"""What a scenario is: the spare rule, the run-time model and its parameters."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from health.maths import SpareParameters, recommend_spares

from .patterns import DEFAULT_COMM_SHARE

__all__ = ["IDEAL", "SPARE_KINDS", "ModelParameters", "SpareRule"]

SPARE_KINDS = ("none", "fixed", "recommended")


@dataclass(frozen=True)
class SpareRule:
    """How many spare nodes each job gets, and whether dropped ones go back.

    >>> SpareRule.parse("2").label, SpareRule.parse("recommended").kind
    ('2', 'recommended')
    >>> SpareRule.parse("lots")
    Traceback (most recent call last):
    ...
    ValueError: spares must be none, a whole number N >= 0 or recommended, got 'lots'
    """

    kind: str = "none"
    count: int = 0
    release: bool = True

    @property
    def label(self) -> str:
        return str(self.count) if self.kind == "fixed" else self.kind

    @classmethod
    def parse(cls, text: object, release: bool = True) -> SpareRule:
        value = str(text).strip().lower()
        if value in ("none", "0"):
            return cls("none", 0, release)
        if value == "recommended":
            return cls("recommended", 0, release)
        if value.isdigit():
            return cls("fixed", int(value), release)
        raise ValueError(f"spares must be none, a whole number N >= 0 or recommended, "
                         f"got {text!r}")


@dataclass(frozen=True)
class ModelParameters:
    """The run-time adjustments and what they need.

    ``placement``: (a) the communication share times the placement factor;
    ``slow_nodes``: (b) abnormal nodes drawn with ``p_abn`` slow the compute
    part by ``alpha_abn`` unless a spare dropped them; ``benchmark``: (c) jobs
    with spares first run the benchmark (``t_bench``, ``alpha_abn`` times
    longer when one of their nodes is abnormal). ``calibration`` maps a policy
    to a measured factor (from the simulator); without it the analytic factor
    is used and the results say so.
    """

    p_abn: float = 0.0
    alpha_abn: float = 1.0
    t_bench: float = 0.0
    comm_share: Mapping[str, float] = field(default_factory=dict)
    placement: bool = True
    slow_nodes: bool = True
    benchmark: bool = True
    calibration: Mapping[str, float] | None = None

    def __post_init__(self) -> None:
        if not 0.0 <= self.p_abn < 1.0:
            raise ValueError(f"p_abn must be in [0, 1), got {self.p_abn}")
        if not (math.isfinite(self.alpha_abn) and self.alpha_abn >= 1.0):
            raise ValueError(f"alpha_abn must be >= 1, got {self.alpha_abn}")
        if not (math.isfinite(self.t_bench) and self.t_bench >= 0.0):
            raise ValueError(f"t_bench must be >= 0, got {self.t_bench}")
        for pattern, share in self.comm_share.items():
            if not 0.0 <= share <= 1.0:
                raise ValueError(f"comm_share of {pattern} must be in [0, 1], got {share}")

    @property
    def ideal(self) -> bool:
        return not (self.placement or self.slow_nodes or self.benchmark)

    @property
    def factor_source(self) -> str:
        if not self.placement:
            return "off"
        return "calibration" if self.calibration else "analytic"

    def share(self, pattern: str) -> float:
        return float(self.comm_share.get(pattern, DEFAULT_COMM_SHARE))

    def as_dict(self) -> dict:
        return {"p_abn": self.p_abn, "alpha_abn": self.alpha_abn, "t_bench": self.t_bench,
                "comm_share": dict(self.comm_share), "placement": self.placement,
                "slow_nodes": self.slow_nodes, "benchmark": self.benchmark,
                "factor_source": self.factor_source}


#: Every adjustment off: recorded run times, no slow nodes, no benchmark.
IDEAL = ModelParameters(placement=False, slow_nodes=False, benchmark=False)


@lru_cache(maxsize=65536)
def recommended_spares(n_node: int, wall: float, share: float, p_abn: float,
                       alpha_abn: float, t_bench: float, release: bool) -> int:
    """The portal's spare recommendation for a job known only by its size and
    requested time (what the scheduler knows at submission)."""
    if p_abn <= 0.0 or alpha_abn <= 1.0 or wall <= 0.0:
        return 0
    params = SpareParameters(p_abn=p_abn, alpha_abn=alpha_abn, t_bench=t_bench)
    rec = recommend_spares(n_node, params, t_cmpt=wall * (1.0 - share),
                           t_comm=wall * share, release=release, max_curve_points=3)
    return int(rec.n_spare)
