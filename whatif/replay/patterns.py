"""Which communication pattern each job gets: the operator's rules, then a mix.

Rules are tried in order; each is ``(field, text, pattern)`` with ``field``
``"name"`` or ``"comment"`` and ``text`` a case-insensitive substring. A job no
rule matches draws from the site-wide ``mix`` (pattern -> weight, seeded), or,
without a mix, gets :data:`DEFAULT_PATTERN`. The pattern chooses the job's
communication share (:data:`DEFAULT_COMM_SHARE` unless the operator sets one
per pattern).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from allocation.hyperx.patterns import PATTERNS, canonical_pattern

from .workload import Job

__all__ = ["DEFAULT_COMM_SHARE", "DEFAULT_PATTERN", "assign_patterns", "check_rules"]

#: The stated default: uniform random traffic, the study's reference pattern.
DEFAULT_PATTERN = "uniform"
#: Share of a job's run time spent communicating, unless set per pattern. The
#: spare model takes half of a wall time as compute when nothing else is known
#: (``health.maths.DEFAULT_COMPUTE_FRACTION``); the other half is this.
DEFAULT_COMM_SHARE = 0.5
_FIELDS = ("name", "comment")


def check_rules(rules: Sequence[Sequence[str]], mix: Mapping[str, float] | None) -> None:
    """Refuse unknown fields and patterns, and a mix without positive weight.

    >>> check_rules([("name", "cfd", "stencil4")], {"all2all": 1})
    >>> check_rules([("user", "x", "all2all")], None)
    Traceback (most recent call last):
    ...
    ValueError: rule 1: field must be name or comment, got 'user'
    """
    for i, rule in enumerate(rules, start=1):
        if len(rule) != 3:
            raise ValueError(f"rule {i}: expected (field, text, pattern)")
        field, text, pattern = rule
        if field not in _FIELDS:
            raise ValueError(f"rule {i}: field must be name or comment, got {field!r}")
        if not text:
            raise ValueError(f"rule {i}: empty text matches every job")
        if canonical_pattern(pattern) not in PATTERNS:
            raise ValueError(f"rule {i}: unknown pattern {pattern!r}")
    _check_mix(mix)


def _check_mix(mix: Mapping[str, float] | None) -> None:
    if mix:
        for pattern, weight in mix.items():
            if canonical_pattern(pattern) not in PATTERNS:
                raise ValueError(f"mix: unknown pattern {pattern!r}")
            if not weight >= 0:
                raise ValueError(f"mix: weight of {pattern} must be >= 0")
        if sum(mix.values()) <= 0:
            raise ValueError("mix: weights must add up to more than 0")


def assign_patterns(jobs: Sequence[Job], rules: Sequence[Sequence[str]] = (),
                    mix: Mapping[str, float] | None = None, seed: int = 0) -> list[Job]:
    """The jobs with ``pattern`` set by the rules, the mix or the default.

    >>> jobs = [Job(1, 0, 0, 1, 2, 1, name="CFD-run"), Job(2, 0, 0, 1, 2, 1)]
    >>> [j.pattern for j in assign_patterns(jobs, [("name", "cfd", "stencil4")])]
    ['stencil4', 'uniform']
    """
    check_rules(rules, mix)
    lowered = [(f, t.lower(), canonical_pattern(p)) for f, t, p in rules]
    names = sorted(mix) if mix else []
    if names:
        weights = np.array([mix[n] for n in names], dtype=float)
        draws = np.random.default_rng(seed).choice(len(names), size=len(jobs),
                                                   p=weights / weights.sum())
    out = []
    for i, job in enumerate(jobs):
        pattern = ""
        for field, text, pat in lowered:
            if text in getattr(job, field).lower():
                pattern = pat
                break
        if not pattern:
            pattern = canonical_pattern(names[int(draws[i])]) if names else DEFAULT_PATTERN
        out.append(replace(job, pattern=pattern))
    return out
