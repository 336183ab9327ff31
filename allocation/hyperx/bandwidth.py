"""Exact partition bandwidth (docs/domain.md section 3) as a linear programme.

Every endpoint of P injects lambda phits/cycle with destinations uniform over
P (self included). Aggregated per ordered pair of distinct switches (a, b) of
P this is a demand ``lambda * w_a * w_b / |P|`` (w = endpoints of P on the
switch); pairs on the same switch use no link. The demand is split over the
k! minimal paths of the pair and every directed link carries at most 1.

We solve the equivalent min-congestion form at lambda = 1::

    minimise  t
    s.t.      sum_{paths p through e} f_p + fixed_e <= t   for each directed link e
              sum_{p of pair (a,b)} f_p = w_a w_b / |P|     for each multi-path pair
              f >= 0

and return ``PB = 1 / t*``. Aligned pairs (k = 1) have a single path: their
load is a constant ``fixed_e`` and costs no variable. By symmetry only
unordered pairs and undirected links are needed (see ``_build``). Only links
used by some minimal path between switches of P (the hull) appear as rows.
HiGHS's interior-point method (with crossover) is used: on these degenerate
multi-commodity LPs it was 5-40x faster than dual simplex on the 3D cases.

Size and speed (measured on the shared 2-core dev box, scipy 1.17):

=============================================  ==============  ==========
partition                                      |S|(|S|-1)q!/2  time
=============================================  ==============  ==========
8x8 c=8 Full Spread (worst 8x8 case, 64 sw)    4,032           ~0.02 s
any other 8x8 partition (random tests)         < 4,032         < 0.05 s
4x4x4 full spread (64 sw)                      12,096          ~0.3 s
8x8x8, 64 / 70 random switches                 ~12-14k         ~1.3-1.7 s
16x16, 122 random switches                     ~14k            ~0.1 s
8x8x8, 128 random switches                     48,768          ~13 s
16x16 full spread (256 sw)                     65,280          ~8 s
=============================================  ==============  ==========

The LP grows as ``|S|^2 q! / 2``; :func:`exact_is_cheap` (used by
``partition_properties`` with ``exact=None``) accepts at most
``EXACT_AUTO_MAX_VARIABLES`` path variables (about 2 s at worst).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .topology import HyperX

__all__ = ["EXACT_AUTO_MAX_VARIABLES", "exact_is_cheap", "exact_partition_bandwidth"]

#: Upper bound on ``|S| (|S| - 1) q! / 2`` for the automatic exact computation.
EXACT_AUTO_MAX_VARIABLES = 15_000


def exact_is_cheap(topology: HyperX, n_switches: int) -> bool:
    """Whether the LP for a partition spanning ``n_switches`` switches is
    small enough to solve automatically (bound on path variables)."""
    q_fact = math.factorial(topology.dimensions)
    return n_switches * (n_switches - 1) // 2 * q_fact <= EXACT_AUTO_MAX_VARIABLES


def _build(topology: HyperX, sw: np.ndarray, w: np.ndarray):
    """Enumerate the minimal paths of every unordered pair of distinct switches.

    By symmetry (reversing every flow of an optimal solution gives another
    one: demands are symmetric, links full duplex) there is an optimal
    solution with ``f(b -> a, reversed p) = f(a -> b, p)``; the load of each
    direction of a link is then the sum over unordered pairs {a, b} of the
    flow of a->b paths crossing it in either direction. So one row per
    undirected link and one set of variables per unordered pair suffice.

    Returns (fixed link ids, fixed loads, var link ids, var column, pair of
    each variable, pair demands, number of variables)."""
    q = topology.dimensions
    coords = topology.switch_coords()[sw]
    total = float(w.sum())
    m = sw.size
    ii, jj = np.triu_indices(m, 1)
    demand = w[ii] * w[jj] / total
    diff = coords[ii] != coords[jj]
    code = diff.astype(np.int64) @ (1 << np.arange(q, dtype=np.int64))
    sides = np.array(topology.sides, dtype=np.int64)
    offs = np.concatenate([[0], np.cumsum(sides)[:-1]])
    width = int(sides.sum())
    strides = np.array([int(np.prod(topology.sides[d + 1:])) for d in range(q)], np.int64)

    def hop_ids(cur, nxt, d):
        lo, hi = np.minimum(cur, nxt), np.maximum(cur, nxt)
        return lo * width + offs[d] + (hi // strides[d]) % sides[d]

    fixed_ids, fixed_load = [], []
    var_ids, var_cols = [], []
    pair_of_var = []
    pair_demand = []
    n_vars = 0
    n_pairs = 0
    for c in np.unique(code):
        sel = np.nonzero(code == c)[0]
        dims = [d for d in range(q) if (int(c) >> d) & 1]
        a_idx = sw[ii[sel]]
        b_coords = coords[jj[sel]]
        a_coords = coords[ii[sel]]
        dem = demand[sel]
        if len(dims) == 1:
            d = dims[0]
            nxt = a_idx + (b_coords[:, d] - a_coords[:, d]) * strides[d]
            fixed_ids.append(hop_ids(a_idx, nxt, d))
            fixed_load.append(dem)
            continue
        pair_ids = n_pairs + np.arange(sel.size)
        n_pairs += sel.size
        pair_demand.append(dem)
        for order in itertools.permutations(dims):
            cur = a_idx.copy()
            cols = n_vars + np.arange(sel.size)
            n_vars += sel.size
            pair_of_var.append(pair_ids)
            for d in order:
                nxt = cur + (b_coords[:, d] - a_coords[:, d]) * strides[d]
                var_ids.append(hop_ids(cur, nxt, d))
                var_cols.append(cols)
                cur = nxt
    cat = lambda xs, dt: np.concatenate(xs).astype(dt) if xs else np.zeros(0, dt)  # noqa: E731
    return (
        cat(fixed_ids, np.int64),
        cat(fixed_load, np.float64),
        cat(var_ids, np.int64),
        cat(var_cols, np.int64),
        cat(pair_of_var, np.int64),
        cat(pair_demand, np.float64),
        n_vars,
    )


def exact_partition_bandwidth(topology: HyperX, endpoints) -> float:
    """Exact partition bandwidth (phits/cycle per endpoint) by LP.

    Returns ``inf`` when all endpoints share one switch (no link is used).

    Examples
    --------
    >>> from allocation.hyperx.policies import static_partition
    >>> hx = HyperX((8, 8), 8)
    >>> round(exact_partition_bandwidth(hx, static_partition("row", 8, 0)), 9)
    1.0
    >>> round(exact_partition_bandwidth(hx, static_partition("full_spread", 8, 0)), 9)
    8.0
    """
    ep = np.unique(np.asarray(endpoints, dtype=np.int64).reshape(-1))
    if ep.size == 0:
        raise ValueError("a partition needs at least one endpoint")
    if ep[0] < 0 or ep[-1] >= topology.n_endpoints:
        raise ValueError(f"endpoint ids must lie in [0, {topology.n_endpoints})")
    sw, w = np.unique(topology.switch_of(ep), return_counts=True)
    if sw.size < 2:
        return math.inf
    w = w.astype(np.float64)
    fixed_ids, fixed_load, var_ids, var_cols, pair_of_var, pair_dem, n_vars = _build(
        topology, sw.astype(np.int64), w
    )
    links, inv = np.unique(np.concatenate([fixed_ids, var_ids]), return_inverse=True)
    n_links = links.size
    fixed = np.bincount(inv[: fixed_ids.size], weights=fixed_load, minlength=n_links)
    if n_vars == 0:
        return float(1.0 / fixed.max())
    # Imported here: scipy.optimize and scipy.sparse take a few tenths of a second to
    # load, which every process importing the models would pay at start (a whole
    # ``hx_simulate`` run: 4 % of its time) for an LP only some requests solve.
    import scipy.sparse as sp
    from scipy.optimize import linprog

    rows = inv[fixed_ids.size :]
    a_links = sp.csr_matrix(
        (np.ones(rows.size), (rows, var_cols)), shape=(n_links, n_vars)
    )
    a_ub = sp.hstack([a_links, sp.csr_matrix(-np.ones((n_links, 1)))], format="csr")
    b_ub = -fixed
    n_pairs = pair_dem.size
    a_eq = sp.csr_matrix(
        (np.ones(n_vars), (pair_of_var, np.arange(n_vars))), shape=(n_pairs, n_vars + 1)
    )
    cost = np.zeros(n_vars + 1)
    cost[-1] = 1.0
    res = linprog(
        cost, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=pair_dem,
        bounds=(0, None), method="highs-ipm",
    )
    if res.status != 0:  # pragma: no cover - the LP is always feasible and bounded
        raise RuntimeError(f"partition bandwidth LP failed: {res.message}")
    return float(1.0 / res.x[-1])
