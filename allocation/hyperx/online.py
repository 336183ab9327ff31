"""Online forms of the study's seven policies: pick endpoints among the free ones.

Each is a function ``(placement, size, seed) -> endpoint ids`` that the policy
registry (:mod:`allocation.hyperx.policies`) names; :func:`~allocation.hyperx.allocate`
checks the request and calls it. ``allocate`` works on any HyperX (any q, sides,
concentration c) and any job size, returns endpoint ids in rank order, is deterministic
for a seed and never returns an unavailable endpoint. Each policy keeps its character
(docs/domain.md section 2.2); "full" switches below are switches whose c endpoints
are all available, k = ceil(size / c) is the number of whole switches a job
needs.

row
    A *row* is a line along the last dimension (fixed coordinates in all the
    others: consecutive switch indices; in 2D the row sy). If one row has k
    full switches, the best-fitting such row is used (fewest full switches,
    then lowest index); otherwise rows are filled in order of decreasing
    number of full switches (then index), full switches only, in index order
    within a row. If the machine has too few full switches, partly free
    switches follow, most free first (then by row order), taking all their
    free endpoints.
diagonal
    Whole full switches chosen greedily in index order so that no two share
    a coordinate value in any dimension (a transversal; in 2D no shared row
    or column; on an empty machine the main diagonal). When no further switch
    fits, a new transversal round starts (relaxation). If full switches run
    out, the same rounds continue over partly free switches, most free first.
full_spread
    Round-robin: round t takes the t-th free endpoint of every switch that
    still has one, so every switch gives at most one endpoint while
    possible. The last, partial round takes switches evenly spaced over the
    index order (so a small job is spread over the whole machine).
rectangular
    A box of whole full switches: box extents are tried by increasing number
    of switches (>= k), then by increasing sum of extents (compactness), then
    lexicographically (2 x 4 before 4 x 2, as in the study), over all cyclic
    placements (prefix sums, first placement in index order). A box qualifies
    when it holds at least k full switches (exactly k for an exact fit on a
    free region) and its first k full switches are taken, so the box grows
    with fragmentation but whole switches are kept whenever the machine has
    k full switches. Inside the box the rank order is column-major
    (dimension 0 fastest), like the static formula. Fallback when the machine
    has fewer than k full switches: the smallest box whose switches hold
    ``size`` free endpoints (placement with most free endpoints), taking all
    free endpoints of its switches in rank order; such an allocation loses
    switch locality.
l_shape
    An L of whole full switches: a corner switch and one arm per dimension
    (arm 0 along dimension 0 includes the corner; arm d >= 1 starts next to
    the corner along dimension d), lengths split as evenly as possible, arm 0
    first; in 2D exactly the study's L. Placements are cyclic, first valid
    corner in index order. A job larger than one L (``n_0 + sum(n_d - 1)``
    switches) takes several equal Ls. When an L cannot be placed, the rest of
    the job takes a compact box of whole free switches as rectangular does,
    and, if there are too few full switches, a compact box of partly free
    switches.
random_switch
    Full switches in uniformly random order (numpy Generator seeded with
    ``seed``), then, if needed, partly free switches in random order.
random_endpoint
    A uniformly random subset of the free endpoints, in random order.

On an empty machine the 2D n x n, c = n job of n^2 endpoints gets exactly
``static_partition(policy, n, 0, seed=seed)``.

Speed: on 16x16x16 c = 16 at 50 % random occupancy a 4,096-node allocation
takes a few milliseconds for every policy (see benchmarks/bench_allocation.py).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ._kernels import transversal_rounds
from .topology import HyperX

__all__ = ["AllocationError", "Placement", "place_diagonal", "place_full_spread",
           "place_l_shape", "place_random_endpoint", "place_random_switch",
           "place_rectangular", "place_row", "take"]


class AllocationError(ValueError):
    """The job cannot be placed; ``reason`` says why (also the message)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Placement:
    """Per-call views of the availability (and of what other jobs hold: ``held``)."""

    def __init__(self, topology: HyperX, avail: np.ndarray, held: np.ndarray) -> None:
        self.hx = topology
        self.c = topology.concentration
        self.avail = avail
        self.held = held
        self.free2d = avail.reshape(topology.n_switches, self.c)
        self.free = self.free2d.sum(axis=1).astype(np.int64)
        self.full = self.free == self.c


def take(ctx: Placement, switches: np.ndarray, size: int) -> np.ndarray:
    """All free endpoints of ``switches`` in that order (local order inside),
    truncated to ``size``."""
    switches = np.asarray(switches, dtype=np.int64)
    sub = ctx.free2d[switches]
    eps = switches[:, None] * ctx.c + np.arange(ctx.c, dtype=np.int64)[None, :]
    return eps[sub][:size]


def _need_switches(ctx: Placement, size: int) -> int:
    return -(-size // ctx.c)


# ------------------------------------------------------------------- row
def place_row(ctx: Placement, size: int, seed: int) -> np.ndarray:
    n_last = ctx.hx.sides[-1]
    n_lines = ctx.hx.n_switches // n_last
    k = _need_switches(ctx, size)
    line_full = ctx.full.reshape(n_lines, n_last).sum(axis=1)
    line_order = np.lexsort((np.arange(n_lines), -line_full))
    fits = np.nonzero(line_full >= k)[0]
    if fits.size:
        best = fits[np.argmin(line_full[fits])]  # first minimum
        line_order = np.concatenate([[best], line_order[line_order != best]])
    line_rank = np.empty(n_lines, dtype=np.int64)
    line_rank[line_order] = np.arange(n_lines)
    sw = np.arange(ctx.hx.n_switches, dtype=np.int64)
    rank = line_rank[sw // n_last]
    full_ids = sw[ctx.full]
    order = full_ids[np.argsort(rank[ctx.full] * n_last + full_ids % n_last, kind="stable")]
    if order.size * ctx.c < size:
        part = sw[(ctx.free > 0) & ~ctx.full]
        part = part[np.lexsort((part, rank[part], -ctx.free[part]))]
        order = np.concatenate([order, part])
    return take(ctx, order, size)


# -------------------------------------------------------------- diagonal
def place_diagonal(ctx: Placement, size: int, seed: int) -> np.ndarray:
    coords = ctx.hx.switch_coords()
    smax = max(ctx.hx.sides)
    full_ids = np.nonzero(ctx.full)[0].astype(np.int64)
    picks = transversal_rounds(coords, full_ids, ctx.free, size, smax)
    got = int(ctx.free[picks].sum())
    if got < size:
        part = np.nonzero((ctx.free > 0) & ~ctx.full)[0].astype(np.int64)
        part = part[np.argsort(-ctx.free[part], kind="stable")]
        more = transversal_rounds(coords, part, ctx.free, size - got, smax)
        picks = np.concatenate([picks, more])
    return take(ctx, picks, size)


# ----------------------------------------------------------- full spread
def place_full_spread(ctx: Placement, size: int, seed: int) -> np.ndarray:
    free = ctx.free
    # smallest t with sum(min(free, t)) >= size
    t = 1
    while int(np.minimum(free, t).sum()) < size:
        t += 1
    before = int(np.minimum(free, t - 1).sum())
    last = np.nonzero(free >= t)[0]
    r = size - before
    chosen = last[(np.arange(r, dtype=np.int64) * last.size) // r]
    rank = np.cumsum(ctx.free2d, axis=1) - 1  # rank of each free endpoint on its switch
    sw_idx, local = np.nonzero(ctx.free2d & (rank < t - 1))
    rounds = rank[sw_idx, local]
    in_last = np.zeros(ctx.hx.n_switches, dtype=np.bool_)
    in_last[chosen] = True
    # the t-th free endpoint (rank t-1) of each chosen switch
    s2, l2 = np.nonzero(ctx.free2d & (rank == t - 1) & in_last[:, None])
    sw_all = np.concatenate([sw_idx, s2]).astype(np.int64)
    loc_all = np.concatenate([local, l2]).astype(np.int64)
    rnd_all = np.concatenate([rounds, np.full(s2.size, t - 1)]).astype(np.int64)
    key = rnd_all * ctx.hx.n_switches + sw_all
    order = np.argsort(key, kind="stable")
    return (sw_all * ctx.c + loc_all)[order]


# ------------------------------------------------------------ box helpers
@lru_cache(maxsize=16)
def _box_shapes(sides: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """All box extents sorted by (product, sum, lexicographic), and products."""
    grids = np.stack(
        np.meshgrid(*[np.arange(1, n + 1) for n in sides], indexing="ij"), axis=-1
    ).reshape(-1, len(sides))
    prod = grids.prod(axis=1)
    keys = [grids[:, d] for d in reversed(range(len(sides)))]
    order = np.lexsort((*tuple(keys), grids.sum(axis=1), prod))
    shapes, prod = grids[order], prod[order]
    shapes.setflags(write=False)
    prod.setflags(write=False)
    return shapes, prod


def _window_sums(values: np.ndarray, extents) -> np.ndarray:
    """Cyclic box sums: out[s] = sum of values over the box starting at s."""
    out = values.astype(np.int64, copy=False)
    for axis, a in enumerate(extents):
        n = out.shape[axis]
        if a == 1:
            continue
        if a == n:
            total = out.sum(axis=axis, keepdims=True)
            out = np.broadcast_to(total, out.shape)
            continue
        ext = np.concatenate([out, np.take(out, np.arange(a - 1), axis=axis)], axis=axis)
        cs = np.cumsum(ext, axis=axis)
        zero_shape = list(cs.shape)
        zero_shape[axis] = 1
        cs = np.concatenate([np.zeros(zero_shape, dtype=np.int64), cs], axis=axis)
        out = np.take(cs, np.arange(a, a + n), axis=axis) - np.take(cs, np.arange(n), axis=axis)
    return np.asarray(out)


def _box_switches(sides: tuple[int, ...], start: np.ndarray, extents) -> np.ndarray:
    """Switch ids of the cyclic box, column-major (dimension 0 fastest)."""
    n_box = int(np.prod(extents))
    offs = np.stack(np.unravel_index(np.arange(n_box), tuple(extents), order="F"), axis=1)
    coords = (start[None, :] + offs) % np.array(sides)[None, :]
    return np.ravel_multi_index(tuple(coords.T), sides).astype(np.int64)


_ALL_SHAPES_FIRST = 32


def _whole_box(ctx: Placement, k: int, usable: np.ndarray) -> np.ndarray | None:
    """k whole ``usable`` switches inside the first placeable box.

    Box extents are tried in preference order (all of the first
    ``_ALL_SHAPES_FIRST``, then only the most compact shape per switch count);
    a box qualifies when it holds at least k usable switches, and the first k
    in rank order are taken. The whole machine is the last box, so this only
    fails when fewer than k switches are usable."""
    sides = ctx.hx.sides
    shapes, prods = _box_shapes(sides)
    if int(usable.sum()) < k:
        return None
    ind = usable.reshape(sides)
    last_prod = -1
    for tried, i in enumerate(np.nonzero(prods >= k)[0]):
        p = int(prods[i])
        if tried >= _ALL_SHAPES_FIRST and p == last_prod:
            continue
        last_prod = p
        ext = tuple(int(x) for x in shapes[i])
        counts = _window_sums(ind, ext).reshape(-1)
        hit = np.nonzero(counts >= k)[0]
        if hit.size:
            start = np.array(np.unravel_index(int(hit[0]), sides))
            box = _box_switches(sides, start, ext)
            return box[usable[box]][:k]
    return None  # pragma: no cover - the whole machine holds every usable switch


def _fallback_box(ctx: Placement, size: int, free: np.ndarray, free2d: np.ndarray) -> np.ndarray:
    """Smallest box (most compact shape per product) holding ``size`` free
    endpoints; all free endpoints of its switches in rank order."""
    sides = ctx.hx.sides
    shapes, prods = _box_shapes(sides)
    vals = free.reshape(sides)
    k = -(-size // ctx.c)
    fmax = int(free.max())
    last_prod = -1
    for i in np.nonzero(prods >= k)[0]:
        p = int(prods[i])
        if p == last_prod or p * fmax < size:
            continue  # one (the most compact) shape per product
        last_prod = p
        ext = tuple(int(x) for x in shapes[i])
        counts = _window_sums(vals, ext).reshape(-1)
        best = int(np.argmax(counts))
        if counts[best] >= size:
            start = np.array(np.unravel_index(best, sides))
            box = _box_switches(sides, start, ext)
            box = box[free[box] > 0]
            sub = free2d[box]
            eps = box[:, None] * ctx.c + np.arange(ctx.c, dtype=np.int64)[None, :]
            return eps[sub][:size]
    raise AssertionError("the whole machine holds every free endpoint")  # pragma: no cover


# ----------------------------------------------------------- rectangular
def place_rectangular(ctx: Placement, size: int, seed: int) -> np.ndarray:
    k = _need_switches(ctx, size)
    box = _whole_box(ctx, k, ctx.full)
    if box is not None:
        return take(ctx, box, size)
    return _fallback_box(ctx, size, ctx.free, ctx.free2d)


# --------------------------------------------------------------- l_shape
def _arm_lengths(k: int, caps: list[int]) -> list[int]:
    """Split k switches over arms with capacities, as evenly as possible,
    earlier arms first."""
    q = len(caps)
    lengths = [0] * q
    left = k
    open_arms = list(range(q))
    while left > 0 and open_arms:
        share, extra = divmod(left, len(open_arms))
        nxt = []
        for j, d in enumerate(open_arms):
            want = share + (1 if j < extra else 0)
            got = min(want, caps[d] - lengths[d])
            lengths[d] += got
            left -= got
            if lengths[d] < caps[d]:
                nxt.append(d)
        open_arms = nxt
    return lengths


def place_l_shape(ctx: Placement, size: int, seed: int) -> np.ndarray:
    sides = ctx.hx.sides
    q = len(sides)
    caps = [sides[0]] + [n - 1 for n in sides[1:]]
    cap = sum(caps)
    k = _need_switches(ctx, size)
    n_l = -(-k // cap)
    sizes = [k // n_l + (1 if i < k % n_l else 0) for i in range(n_l)]
    usable = ctx.full.copy()
    picked: list[np.ndarray] = []
    coords = ctx.hx.switch_coords()
    strides = np.array([int(np.prod(sides[d + 1:])) for d in range(q)], dtype=np.int64)
    for kl in sizes:
        lengths = _arm_lengths(kl, caps)
        ind = usable.reshape(sides)
        ok = np.ones(sides, dtype=np.bool_)
        for d, ln in enumerate(lengths):
            if ln == 0:
                continue
            ext = [1] * q
            ext[d] = ln
            win = _window_sums(ind, ext)
            if d > 0:  # arm d starts one step from the corner
                win = np.roll(win, -1, axis=d)
            ok &= win == ln
        hit = np.nonzero(ok.reshape(-1))[0]
        if hit.size == 0:
            break
        corner = coords[int(hit[0])]
        members = []
        for d, ln in enumerate(lengths):
            t = np.arange(ln, dtype=np.int64) + (0 if d == 0 else 1)
            vals = (corner[d] + t) % sides[d]
            members.append(
                int(np.dot(corner, strides)) + (vals - corner[d]) * strides[d]
            )
        sw = np.concatenate(members)
        usable[sw] = False
        picked.append(sw)
    order = np.concatenate(picked) if picked else np.zeros(0, dtype=np.int64)
    first = take(ctx, order, size)
    if first.size == size:
        return first
    # fallback 1: a compact box of whole free switches for the rest
    box = _whole_box(ctx, _need_switches(ctx, size - first.size), usable)
    if box is not None:
        return np.concatenate([first, take(ctx, box, size - first.size)])
    # fallback 2: compact box of partly free switches for the rest
    left = ctx.avail.copy()
    left[first] = False
    free2d = left.reshape(ctx.hx.n_switches, ctx.c)
    rest = _fallback_box(ctx, size - first.size, free2d.sum(axis=1), free2d)
    return np.concatenate([first, rest])


# ---------------------------------------------------------------- random
def place_random_switch(ctx: Placement, size: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    full_ids = np.nonzero(ctx.full)[0]
    order = full_ids[rng.permutation(full_ids.size)]
    if order.size * ctx.c < size:
        part = np.nonzero((ctx.free > 0) & ~ctx.full)[0]
        order = np.concatenate([order, part[rng.permutation(part.size)]])
    return take(ctx, order, size)


def place_random_endpoint(ctx: Placement, size: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    free_eps = np.nonzero(ctx.avail)[0].astype(np.int64)
    return free_eps[rng.permutation(free_eps.size)[:size]]
