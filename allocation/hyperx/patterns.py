"""The communication patterns: one vocabulary for jobs, recommendations and the
simulator (which generates them), with the older spellings read as aliases."""

from __future__ import annotations

# Each name is spelled here only; every module reads these (the simulator's
# rules per kernel are its registry, ``simulation.engine.kernels.KERNELS``).
UNIFORM = "uniform"
PERMUTATION = "permutation"
SWITCH_PERMUTATION = "switch_permutation"
ALL2ALL = "all2all"
ALLREDUCE = "allreduce"
STENCIL4 = "stencil4"
STENCIL8 = "stencil8"
RANDOM_INVOLUTION = "random_involution"

OPEN_LOOP_PATTERNS = (UNIFORM, PERMUTATION, SWITCH_PERMUTATION)
#: The study's kernels, in the order of its tables (the reference study and its
#: reproduction run these, whatever kernels are added later).
STUDY_KERNELS = (ALL2ALL, ALLREDUCE, STENCIL4, STENCIL8, RANDOM_INVOLUTION)
#: Every closed-loop kernel the simulator runs: the study's, then any added.
KERNEL_PATTERNS = STUDY_KERNELS
PATTERNS = OPEN_LOOP_PATTERNS + KERNEL_PATTERNS
#: Other spellings of the patterns, accepted wherever a pattern is read (jobs
#: used to name them so) and never written: one vocabulary, ``PATTERNS``.
PATTERN_ALIASES = {
    "all-to-all": ALL2ALL,
    "all-reduce": ALLREDUCE,
    "stencil-4": STENCIL4,
    "stencil-8": STENCIL8,
    "random-involution": RANDOM_INVOLUTION,
    "switch-permutation": SWITCH_PERMUTATION,
}


def canonical_pattern(name: object) -> object:
    """The pattern's name in the one vocabulary (aliases mapped, anything else as is).

    Examples
    --------
    >>> canonical_pattern("all-to-all"), canonical_pattern("stencil4")
    ('all2all', 'stencil4')
    """
    return PATTERN_ALIASES.get(name, name) if isinstance(name, str) else name
