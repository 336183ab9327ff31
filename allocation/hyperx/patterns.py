"""The communication patterns: one vocabulary for jobs, recommendations and the
simulator (which generates them), with the older spellings read as aliases."""

from __future__ import annotations

OPEN_LOOP_PATTERNS = ("uniform", "permutation", "switch_permutation")
KERNEL_PATTERNS = ("all2all", "allreduce", "stencil4", "stencil8", "random_involution")
PATTERNS = OPEN_LOOP_PATTERNS + KERNEL_PATTERNS
#: Other spellings of the patterns, accepted wherever a pattern is read (jobs
#: used to name them so) and never written: one vocabulary, ``PATTERNS``.
PATTERN_ALIASES = {
    "all-to-all": "all2all",
    "all-reduce": "allreduce",
    "stencil-4": "stencil4",
    "stencil-8": "stencil8",
    "random-involution": "random_involution",
    "switch-permutation": "switch_permutation",
}

def canonical_pattern(name: object) -> object:
    """The pattern's name in the one vocabulary (aliases mapped, anything else as is).

    Examples
    --------
    >>> canonical_pattern("all-to-all"), canonical_pattern("stencil4")
    ('all2all', 'stencil4')
    """
    return PATTERN_ALIASES.get(name, name) if isinstance(name, str) else name
