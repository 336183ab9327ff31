"""The kernel registry: every closed-loop kernel's rules in one place.

A kernel is its per-rank message lists (``(destination rank, packets, step)``),
its number of dependency steps and whether ranks wait on receives, its message
size at the study's volume, the rule its number of ranks must follow, and the
listed messages per rank the memory estimate counts. Configuration checks,
traffic, scenarios, the memory estimate and the portal's predictions all read
:data:`KERNELS`; the names are the vocabulary's (``allocation.hyperx.patterns``).
Adding a kernel is its name there, an entry here and its tests (a kernel
generated inside the cycle loop, as ``all2all`` is, also needs a loop kind).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from allocation.hyperx.patterns import ALL2ALL, ALLREDUCE, RANDOM_INVOLUTION, STENCIL4, STENCIL8

__all__ = ["KERNELS", "Kernel", "Messages", "stencil_grid"]

#: Per-rank lists of ``(destination rank, packets, step)``.
Messages = list[list[tuple[int, int, int]]]


@dataclass(frozen=True)
class Kernel:
    """One kernel's rules (see the module docstring)."""

    #: (ranks k, packets per message m, generator, periodic grid) -> message lists;
    #: None: generated inside the cycle loop (nothing listed).
    messages: Callable[[int, int, np.random.Generator, bool], Messages] | None
    #: ranks -> dependency steps (ranks start step s + 1 when step s has arrived).
    steps: Callable[[int], int]
    #: Ranks wait on receives between steps.
    waits: bool
    #: (ranks, packets a rank sends at the study's volume, packets of a stencil
    #: message at it) -> packets per message.
    study_packets: Callable[[int, int, int], int]
    #: ranks -> listed messages per rank (the memory estimate's count).
    listed: Callable[[int], int] = lambda k: 0
    #: ranks -> packets one rank sends in all, per packet of a message.
    sent: Callable[[int, int], int] | None = None
    #: The number of ranks it accepts, in words, and the test of it.
    rank_rule: str = ""
    ranks_ok: Callable[[int], bool] = lambda k: True
    #: The most ranks it can run among ``n`` nodes (``ranks_ok``'s largest).
    usable_ranks: Callable[[int], int] = lambda n: n

    def packets_per_rank(self, k: int, m: int) -> int:
        """Packets one rank sends in all (an upper bound for stencils)."""
        return self.sent(k, m) if self.sent else self.listed(k) * m


def _lg(k: int) -> int:
    return max(1, k.bit_length() - 1)


def stencil_grid(k: int) -> tuple[int, int]:
    """``(px, py)`` with ``px * py == k``, ``px >= py``, as square as possible.

    Rank ``r`` sits at ``x = r mod px``, ``y = r div px``: the first coordinate runs
    fastest and is the longer side, as in the study's simulator, whose authors list
    a stencil's longer side first (engine 2.2; docs/domain.md 6.9).

    Examples
    --------
    >>> stencil_grid(64), stencil_grid(32), stencil_grid(128), stencil_grid(7)
    ((8, 8), (8, 4), (16, 8), (7, 1))
    """
    py = int(np.floor(np.sqrt(k)))
    while k % py:
        py -= 1
    return k // py, py


def _allreduce_messages(k: int, m: int, rng: np.random.Generator, wrap: bool) -> Messages:
    """Rabenseifner's all-reduce: reduce-scatter steps with halving sizes, then
    the all-gather in reverse order (step ``s`` waits for step ``s - 1``)."""
    lg = k.bit_length() - 1
    msgs: Messages = [[] for _ in range(k)]
    for r in range(k):
        for j in range(lg):
            msgs[r].append((r ^ (1 << j), max(1, m >> j), j))
        for j in range(lg):
            b = lg - 1 - j
            msgs[r].append((r ^ (1 << b), max(1, m >> b), lg + j))
    return msgs


def _stencil(neighbours: int) -> Callable[[int, int, np.random.Generator, bool], Messages]:
    """One message to each grid neighbour (4: von Neumann, 8: Moore); without
    ``wrap`` ranks on the border have fewer, as in the study."""
    offs = [(1, 0), (-1, 0), (0, 1), (0, -1)]
    if neighbours == 8:
        offs += [(1, 1), (1, -1), (-1, 1), (-1, -1)]

    def messages(k: int, m: int, rng: np.random.Generator, wrap: bool) -> Messages:
        px, py = stencil_grid(k)
        msgs = []
        for r in range(k):
            y, x = divmod(r, px)
            if wrap:
                msgs.append([(((y + dy) % py) * px + (x + dx) % px, m, 0) for dx, dy in offs])
            else:  # the study's neighbour sets: ranks on the border have fewer
                msgs.append([((y + dy) * px + x + dx, m, 0) for dx, dy in offs
                             if 0 <= x + dx < px and 0 <= y + dy < py])
        return msgs

    return messages


def _involution_messages(k: int, m: int, rng: np.random.Generator, wrap: bool) -> Messages:
    """A random perfect matching (one idle rank when ``k`` is odd); partners
    exchange one message."""
    order = rng.permutation(k)
    msgs: Messages = [[] for _ in range(k)]
    for i in range(0, k - 1, 2):
        a, b = int(order[i]), int(order[i + 1])
        msgs[a].append((b, m, 0))
        msgs[b].append((a, m, 0))
    return msgs


def _stencil_kernel(neighbours: int) -> Kernel:
    return Kernel(messages=_stencil(neighbours), steps=lambda k: 1, waits=False,
                  study_packets=lambda k, per_rank, stencil: max(1, stencil),
                  listed=lambda k: neighbours)


#: Every kernel by name, in the order of the study's tables.
KERNELS: dict[str, Kernel] = {
    ALL2ALL: Kernel(
        messages=None, steps=lambda k: 1, waits=False,
        study_packets=lambda k, per_rank, stencil: max(1, per_rank // k),
        sent=lambda k, m: (k - 1) * m,
        rank_rule="at most 4096 ranks", ranks_ok=lambda k: k <= 4096,
        usable_ranks=lambda n: min(n, 4096)),
    ALLREDUCE: Kernel(
        messages=_allreduce_messages, steps=lambda k: 2 * (k.bit_length() - 1), waits=True,
        study_packets=lambda k, per_rank, stencil: max(1, per_rank // 2),
        listed=lambda k: 2 * _lg(k),
        sent=lambda k, m: 2 * sum(max(1, m >> j) for j in range(_lg(k))),
        rank_rule="a power-of-two number of ranks", ranks_ok=lambda k: not k & (k - 1),
        usable_ranks=lambda n: 1 << (n.bit_length() - 1)),  # Rabenseifner
    STENCIL4: _stencil_kernel(4),
    STENCIL8: _stencil_kernel(8),
    RANDOM_INVOLUTION: Kernel(
        messages=_involution_messages, steps=lambda k: 1, waits=False,
        study_packets=lambda k, per_rank, stencil: per_rank, listed=lambda k: 1),
}
