"""Traffic patterns and kernels, compiled into flat per-rank tables.

An *application* is a list of endpoints in rank order plus a pattern.  Open
loop patterns draw a packet per cycle with probability ``rate / P``:

- ``uniform``: each packet to a uniform random other rank;
- ``permutation``: each rank to a fixed partner, a uniformly random cyclic
  permutation (Sattolo's algorithm, so nobody sends to itself);
- ``switch_permutation``: ranks in groups of ``c`` (the concentration, i.e.
  a switch's worth of tasks); groups are mapped to groups by a random
  cyclic permutation and task ``j`` of a group sends to task ``j`` of its
  image (adversarial: a whole switch's traffic targets one switch).

Closed-loop kernels send messages of ``message_packets`` packets:

- ``all2all``: step ``i = 1 .. k-1``: rank ``r`` sends to ``(r + i) mod k``;
  ranks proceed asynchronously (no waiting on receives);
- ``allreduce`` (Rabenseifner, ``k`` a power of two): reduce-scatter steps
  ``j = 0 .. log2 k - 1`` exchange ``max(1, M >> j)`` packets with
  ``r xor 2^j``, then all-gather in reverse order with growing sizes; a rank
  starts step ``s + 1`` only once its step-``s`` message has fully arrived;
- ``stencil4`` / ``stencil8``: ranks on a ``px x py`` grid (as square as
  possible, ``px >= py``, ``x`` fastest), one message to each of the up to 4
  (von Neumann) or 8 (Moore) neighbours, on a periodic grid only with
  ``stencil_wrap``;
- ``random_involution``: a random perfect matching of the ranks (one idle
  rank when ``k`` is odd); partners exchange one message.

A kernel completes when all its packets are delivered. The kernels' message
lists and rules are in :mod:`.kernels` (the registry); this module compiles them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from allocation.hyperx.patterns import OPEN_LOOP_PATTERNS, PERMUTATION, SWITCH_PERMUTATION, UNIFORM

from .kernels import KERNELS, stencil_grid
from .loop import K_ALL2ALL, K_ALL2ALL_ROUNDS, K_FIXED, K_LIST, K_UNIFORM

__all__ = [
    "AppSpec",
    "TrafficTables",
    "build_traffic",
    "kernel_messages",
    "sattolo",
    "stencil_grid",
]


@dataclass(frozen=True)
class AppSpec:
    """One application: endpoints in rank order and what they run.

    ``packets_per_task`` applies to open-loop patterns (``None``: unbounded);
    ``role`` is ``'app'`` or ``'background'``.
    """

    endpoints: np.ndarray
    pattern: str
    rate: float
    packets_per_task: int | None
    message_packets: int
    vc_set: int
    policy: str
    role: str = "app"


@dataclass(frozen=True)
class TrafficTables:
    """Arrays consumed by the cycle loop (see :func:`build_traffic`)."""

    app_kind: np.ndarray
    app_prob: np.ndarray
    app_rank0: np.ndarray
    app_nranks: np.ndarray
    app_vcset: np.ndarray
    app_total: np.ndarray
    app_wait: np.ndarray
    app_msize: np.ndarray
    rank_ep: np.ndarray
    rank_app: np.ndarray
    rank_partner: np.ndarray
    rank_left: np.ndarray
    rank_m: np.ndarray
    rank_mleft: np.ndarray
    rank_msg_ptr: np.ndarray
    msg_dst: np.ndarray
    msg_size: np.ndarray
    msg_step: np.ndarray
    rank_recv_ptr: np.ndarray
    expect: np.ndarray


def sattolo(k: int, rng: np.random.Generator) -> np.ndarray:
    """Uniformly random cyclic permutation of ``range(k)`` (no fixed point).

    Examples
    --------
    >>> perm = sattolo(6, np.random.default_rng(1))
    >>> sorted(perm.tolist()), bool(np.all(perm != np.arange(6)))
    ([0, 1, 2, 3, 4, 5], True)
    """
    perm = np.arange(k)
    for i in range(k - 1, 0, -1):
        j = int(rng.integers(0, i))
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def kernel_messages(
    pattern: str, k: int, message_packets: int, rng: np.random.Generator,
    wrap: bool = False,
) -> tuple[list[list[tuple[int, int, int]]], int, bool]:
    """Per-rank message lists ``(dst_rank, packets, step)`` of a kernel.

    Returns the lists, the number of dependency steps and whether ranks wait
    on receives.  ``all2all`` is generated inside the loop and not listed.

    Examples
    --------
    >>> msgs, steps, wait = kernel_messages("allreduce", 4, 4, np.random.default_rng(0))
    >>> msgs[0], steps, wait
    ([(1, 4, 0), (2, 2, 1), (2, 2, 2), (1, 4, 3)], 4, True)
    >>> kernel_messages("stencil4", 4, 1, np.random.default_rng(0))[0][0]
    [(1, 1, 0), (2, 1, 0)]
    >>> kernel_messages("stencil4", 4, 1, np.random.default_rng(0), wrap=True)[0][0]
    [(1, 1, 0), (1, 1, 0), (2, 1, 0), (2, 1, 0)]
    """
    kernel = KERNELS.get(pattern)
    if kernel is None or kernel.messages is None:
        raise ValueError(f"pattern: not a listed kernel: {pattern!r}")
    return kernel.messages(k, message_packets, rng, wrap), kernel.steps(k), kernel.waits


def _loop_generated(pattern: str) -> bool:
    """A kernel the cycle loop generates itself (the all-to-all), nothing listed."""
    kernel = KERNELS.get(pattern)
    return kernel is not None and kernel.messages is None


def build_traffic(
    apps: list[AppSpec], packet_phits: int, concentration: int, seed: int,
    all2all_rounds: bool = True, stencil_wrap: bool = False,
) -> TrafficTables:
    """Compile applications into the flat tables of the cycle loop.

    ``all2all_rounds`` selects the study's all-to-all schedule (``M`` rounds
    of one packet to every peer in shift order, so consecutive packets of a
    rank go to different peers) over ``M`` packets back to back per peer;
    ``stencil_wrap`` makes the stencil grid periodic (the study's is not).
    The applications draw from one generator in their order (partners of
    the permutations, the involution's matching).
    """
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0x7A11C]))
    tables = _TableBuilder(len(apps))
    for a, app in enumerate(apps):
        k = len(app.endpoints)
        if app.pattern in OPEN_LOOP_PATTERNS:
            part = _open_loop_app(app, k, packet_phits, concentration, rng)
        elif _loop_generated(app.pattern):
            part = _AppPart(kind=K_ALL2ALL_ROUNDS if all2all_rounds else K_ALL2ALL,
                            total=k * (k - 1) * app.message_packets)
        else:
            msgs, steps, w = kernel_messages(app.pattern, k, app.message_packets, rng,
                                             wrap=stencil_wrap)
            part = _AppPart(kind=K_LIST, total=sum(s for ml in msgs for _, s, _ in ml),
                            wait=1 if w else 0, msgs=msgs, steps=steps)
        tables.add(a, app, part)
    return tables.tables()


@dataclass
class _AppPart:
    """What an application's pattern adds to the tables (see :func:`build_traffic`).

    ``partner`` and ``left`` are per rank (rank-local partner indices and
    packets left, ``None``: identity and zeros); ``msgs`` the per-rank
    message lists of a listed kernel (``None``: none).
    """

    kind: int
    prob: float = 0.0
    total: int = -1
    wait: int = 0
    partner: np.ndarray | None = None
    left: np.ndarray | None = None
    msgs: list[list[tuple[int, int, int]]] | None = None
    steps: int = 0


def _open_loop_app(
    app: AppSpec, k: int, packet_phits: int, concentration: int, rng: np.random.Generator
) -> _AppPart:
    """An open-loop pattern: Bernoulli(rate / P) arrivals, to a uniform random
    rank or to a fixed partner; ``packets_per_task`` bounds a task's packets."""
    ppt = app.packets_per_task
    return _AppPart(
        kind=K_UNIFORM if app.pattern == UNIFORM else K_FIXED,
        prob=app.rate / packet_phits,
        total=-1 if ppt is None else k * ppt,
        wait=-1 if app.role == "background" else 0,
        partner=_open_loop_partners(app.pattern, k, concentration, rng),
        left=np.full(k, -1 if ppt is None else ppt, np.int64),
    )


def _open_loop_partners(
    pattern: str, k: int, concentration: int, rng: np.random.Generator
) -> np.ndarray:
    """Rank-local partners: a cyclic permutation of the ranks (``permutation``)
    or of switch-sized groups (``switch_permutation``); the identity (unused)
    for ``uniform``."""
    if pattern == PERMUTATION:
        return sattolo(k, rng)
    if pattern == SWITCH_PERMUTATION:
        g = concentration
        if k // g >= 2:
            gperm = sattolo(k // g, rng)
            return gperm[np.arange(k) // g] * g + np.arange(k) % g
        return sattolo(k, rng)
    return np.arange(k)


class _TableBuilder:
    """Accumulates the applications' parts, in order, into :class:`TrafficTables`."""

    def __init__(self, n_apps: int) -> None:
        self.kind = np.zeros(n_apps, np.int32)
        self.prob = np.zeros(n_apps, np.float64)
        self.rank0 = np.zeros(n_apps, np.int64)
        self.nranks = np.zeros(n_apps, np.int64)
        self.vcset = np.zeros(n_apps, np.int32)
        self.total = np.full(n_apps, -1, np.int64)
        self.wait = np.zeros(n_apps, np.int32)
        self.msize = np.ones(n_apps, np.int64)
        self.rank_ep: list[np.ndarray] = []
        self.rank_app: list[np.ndarray] = []
        self.partner: list[np.ndarray] = []
        self.left: list[np.ndarray] = []
        self.rm: list[int] = []
        self.rmleft: list[int] = []
        self.msg_ptr = [0]
        self.mdst: list[int] = []
        self.msz: list[int] = []
        self.mstep: list[int] = []
        self.recv_ptr = [0]
        self.expect: list[np.ndarray] = []
        self.r0 = 0

    def add(self, a: int, app: AppSpec, part: _AppPart) -> None:
        """Append application ``a`` (its ranks follow the previous ones')."""
        eps = np.asarray(app.endpoints, dtype=np.int64)
        k, r0 = len(eps), self.r0
        self.rank0[a], self.nranks[a], self.vcset[a] = r0, k, app.vc_set
        self.msize[a] = app.message_packets
        self.kind[a], self.prob[a], self.total[a], self.wait[a] = (
            part.kind, part.prob, part.total, part.wait)
        self.rank_ep.append(eps)
        self.rank_app.append(np.full(k, a))
        self.partner.append((np.arange(k) if part.partner is None else part.partner) + r0)
        self.left.append(np.zeros(k, np.int64) if part.left is None else part.left)
        msgs = part.msgs if part.msgs is not None else [[] for _ in range(k)]
        self._add_messages(app, msgs, part.steps)
        self.r0 += k

    def _add_messages(
        self, app: AppSpec, msgs: list[list[tuple[int, int, int]]], steps: int
    ) -> None:
        """The ranks' message lists, first-message sizes and expected receives."""
        k, r0 = len(msgs), self.r0
        for r in range(k):
            self.rm.append(0 if _loop_generated(app.pattern) else len(self.mdst))
            self.rmleft.append(msgs[r][0][1] if msgs[r] else app.message_packets)
            for d, sz, st in msgs[r]:
                self.mdst.append(d + r0)
                self.msz.append(sz)
                self.mstep.append(st)
            self.msg_ptr.append(len(self.mdst))
        exp_all = np.zeros((k, steps), np.int64)  # expected receives per (rank, step)
        for src in range(k):
            for d, sz, st in msgs[src]:
                exp_all[d, st] += sz
        self.expect.append(exp_all.ravel())
        self.recv_ptr.extend((self.recv_ptr[-1] + steps * np.arange(1, k + 1)).tolist())

    def tables(self) -> TrafficTables:
        """The flat tables of every application added."""

        def cat(parts: list, dtype: type) -> np.ndarray:
            return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)

        return TrafficTables(
            app_kind=self.kind,
            app_prob=self.prob,
            app_rank0=self.rank0,
            app_nranks=self.nranks,
            app_vcset=self.vcset,
            app_total=self.total,
            app_wait=self.wait,
            app_msize=self.msize,
            rank_ep=cat(self.rank_ep, np.int64),
            rank_app=cat(self.rank_app, np.int64),
            rank_partner=cat(self.partner, np.int64),
            rank_left=cat(self.left, np.int64),
            rank_m=np.asarray(self.rm, np.int64),
            rank_mleft=np.asarray(self.rmleft, np.int64),
            rank_msg_ptr=np.asarray(self.msg_ptr, np.int64),
            msg_dst=np.asarray(self.mdst, np.int64),
            msg_size=np.asarray(self.msz, np.int64),
            msg_step=np.asarray(self.mstep, np.int64),
            rank_recv_ptr=np.asarray(self.recv_ptr, np.int64),
            expect=cat(self.expect, np.int64) if self.expect else np.zeros(0, np.int64),
        )
