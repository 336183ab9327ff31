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
- ``stencil4`` / ``stencil8``: ranks on a periodic ``px x py`` grid (as square
  as possible, ``px <= py``), one message to each of the 4 (von Neumann) or
  8 (Moore) neighbours;
- ``random_involution``: a random perfect matching of the ranks (one idle
  rank when ``k`` is odd); partners exchange one message.

A kernel completes when all its packets are delivered.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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


def stencil_grid(k: int) -> tuple[int, int]:
    """``(px, py)`` with ``px * py == k``, ``px <= py``, as square as possible.

    Examples
    --------
    >>> stencil_grid(64), stencil_grid(32), stencil_grid(7)
    ((8, 8), (4, 8), (1, 7))
    """
    px = int(np.floor(np.sqrt(k)))
    while k % px:
        px -= 1
    return px, k // px


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
    m = message_packets
    if pattern == "allreduce":
        lg = k.bit_length() - 1
        msgs = [[] for _ in range(k)]
        for r in range(k):
            for j in range(lg):
                msgs[r].append((r ^ (1 << j), max(1, m >> j), j))
            for j in range(lg):
                b = lg - 1 - j
                msgs[r].append((r ^ (1 << b), max(1, m >> b), lg + j))
        return msgs, 2 * lg, True
    if pattern in ("stencil4", "stencil8"):
        px, py = stencil_grid(k)
        offs = [(1, 0), (-1, 0), (0, 1), (0, -1)]
        if pattern == "stencil8":
            offs += [(1, 1), (1, -1), (-1, 1), (-1, -1)]
        msgs = []
        for r in range(k):
            y, x = divmod(r, px)
            if wrap:
                msgs.append([(((y + dy) % py) * px + (x + dx) % px, m, 0) for dx, dy in offs])
            else:  # the study's neighbour sets: ranks on the border have fewer
                msgs.append([((y + dy) * px + x + dx, m, 0) for dx, dy in offs
                             if 0 <= x + dx < px and 0 <= y + dy < py])
        return msgs, 1, False
    if pattern == "random_involution":
        order = rng.permutation(k)
        msgs = [[] for _ in range(k)]
        for i in range(0, k - 1, 2):
            a, b = int(order[i]), int(order[i + 1])
            msgs[a].append((b, m, 0))
            msgs[b].append((a, m, 0))
        return msgs, 1, False
    raise ValueError(f"pattern: not a listed kernel: {pattern!r}")


def build_traffic(
    apps: list[AppSpec], packet_phits: int, concentration: int, seed: int,
    all2all_rounds: bool = True, stencil_wrap: bool = False,
) -> TrafficTables:
    """Compile applications into the flat tables of the cycle loop.

    ``all2all_rounds`` selects the study's all-to-all schedule (``M`` rounds
    of one packet to every peer in shift order, so consecutive packets of a
    rank go to different peers) over ``M`` packets back to back per peer;
    ``stencil_wrap`` makes the stencil grid periodic (the study's is not).
    """
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0x7A11C]))
    n_apps = len(apps)
    kind = np.zeros(n_apps, np.int32)
    prob = np.zeros(n_apps, np.float64)
    rank0 = np.zeros(n_apps, np.int64)
    nranks = np.zeros(n_apps, np.int64)
    vcset = np.zeros(n_apps, np.int32)
    total = np.full(n_apps, -1, np.int64)
    wait = np.zeros(n_apps, np.int32)
    msize = np.ones(n_apps, np.int64)
    rank_ep, rank_app, partner, left = [], [], [], []
    rm, rmleft, msg_ptr, mdst, msz, mstep = [], [], [0], [], [], []
    recv_ptr, expect = [0], []
    r0 = 0
    for a, app in enumerate(apps):
        eps = np.asarray(app.endpoints, dtype=np.int64)
        k = len(eps)
        rank0[a], nranks[a], vcset[a] = r0, k, app.vc_set
        msize[a] = app.message_packets
        rank_ep.append(eps)
        rank_app.append(np.full(k, a))
        part = np.arange(k)
        lft = np.zeros(k, np.int64)
        msgs: list[list[tuple[int, int, int]]] = [[] for _ in range(k)]
        steps = 0
        if app.pattern in ("uniform", "permutation", "switch_permutation"):
            kind[a] = K_UNIFORM if app.pattern == "uniform" else K_FIXED
            prob[a] = app.rate / packet_phits
            ppt = app.packets_per_task
            lft[:] = -1 if ppt is None else ppt
            if ppt is not None:
                total[a] = k * ppt
            if app.pattern == "permutation":
                part = sattolo(k, rng)
            elif app.pattern == "switch_permutation":
                g = concentration
                if k // g >= 2:
                    gperm = sattolo(k // g, rng)
                    part = gperm[np.arange(k) // g] * g + np.arange(k) % g
                else:
                    part = sattolo(k, rng)
            if app.role == "background":
                wait[a] = -1
        elif app.pattern == "all2all":
            kind[a] = K_ALL2ALL_ROUNDS if all2all_rounds else K_ALL2ALL
            total[a] = k * (k - 1) * app.message_packets
        else:
            kind[a] = K_LIST
            msgs, steps, w = kernel_messages(app.pattern, k, app.message_packets, rng,
                                             wrap=stencil_wrap)
            wait[a] = 1 if w else 0
            total[a] = sum(s for ml in msgs for _, s, _ in ml)
        partner.append(part + r0)
        left.append(lft)
        for r in range(k):
            rm.append(0 if app.pattern == "all2all" else len(mdst))
            rmleft.append(msgs[r][0][1] if msgs[r] else app.message_packets)
            for d, sz, st in msgs[r]:
                mdst.append(d + r0)
                msz.append(sz)
                mstep.append(st)
            msg_ptr.append(len(mdst))
        exp_all = np.zeros((k, steps), np.int64)  # expected receives per (rank, step)
        for src in range(k):
            for d, sz, st in msgs[src]:
                exp_all[d, st] += sz
        expect.append(exp_all.ravel())
        recv_ptr.extend((recv_ptr[-1] + steps * np.arange(1, k + 1)).tolist())
        r0 += k

    def cat(parts: list, dtype: type) -> np.ndarray:
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)

    return TrafficTables(
        app_kind=kind,
        app_prob=prob,
        app_rank0=rank0,
        app_nranks=nranks,
        app_vcset=vcset,
        app_total=total,
        app_wait=wait,
        app_msize=msize,
        rank_ep=cat(rank_ep, np.int64),
        rank_app=cat(rank_app, np.int64),
        rank_partner=cat(partner, np.int64),
        rank_left=cat(left, np.int64),
        rank_m=np.asarray(rm, np.int64),
        rank_mleft=np.asarray(rmleft, np.int64),
        rank_msg_ptr=np.asarray(msg_ptr, np.int64),
        msg_dst=np.asarray(mdst, np.int64),
        msg_size=np.asarray(msz, np.int64),
        msg_step=np.asarray(mstep, np.int64),
        rank_recv_ptr=np.asarray(recv_ptr, np.int64),
        expect=cat(expect, np.int64) if expect else np.zeros(0, np.int64),
    )
