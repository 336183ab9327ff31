"""Numba-compiled inner loops (flat numpy arrays in, flat arrays out).

Private: the public wrappers live in :mod:`properties` and :mod:`online`.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def max_pair_distance(coords):  # pragma: no cover - compiled
    """Max Hamming distance among rows of ``coords`` (m, q); stops at q."""
    m, q = coords.shape
    best = 0
    for i in range(m):
        for j in range(i + 1, m):
            d = 0
            for k in range(q):
                if coords[i, k] != coords[j, k]:
                    d += 1
            if d > best:
                best = d
                if best == q:
                    return best
    return best


@njit(cache=True)
def all_pairs_weakly_convex(coords, index, member, strides):  # pragma: no cover
    """True when every pair of switches (rows of ``coords`` with switch ids
    ``index``) has at least one minimal path inside ``member`` (bool over all
    switches). Dynamic programme over the subsets of differing dimensions:
    the vertex reached after fixing the dimensions in ``mask`` is a with
    those coordinates taken from b."""
    m, q = coords.shape
    reach = np.zeros(1 << q, dtype=np.bool_)
    for i in range(m):
        for j in range(i + 1, m):
            diff = 0
            k = 0
            for d in range(q):
                if coords[i, d] != coords[j, d]:
                    diff |= 1 << d
                    k += 1
            if k <= 1:
                continue
            reach[:] = False
            reach[0] = True
            for mask in range(1, diff + 1):
                if (mask & diff) != mask:
                    continue
                node = index[i]
                for d in range(q):
                    if mask & (1 << d):
                        node += (coords[j, d] - coords[i, d]) * strides[d]
                if not member[node]:
                    continue
                ok = False
                for d in range(q):
                    bit = 1 << d
                    if (mask & bit) and reach[mask ^ bit]:
                        ok = True
                        break
                reach[mask] = ok
            if not reach[diff]:
                return False
    return True


@njit(cache=True)
def transversal_rounds(coords, candidates, take, need, sides_max):  # pragma: no cover
    """Greedy Latin-style picks: scan ``candidates`` (switch ids in priority
    order) in rounds; inside a round no two picked switches share a
    coordinate value in any dimension. Each pick adds ``take[s]`` endpoints;
    stop once ``need`` endpoints are covered. Returns the picked switch ids
    in pick order."""
    n_cand = candidates.shape[0]
    q = coords.shape[1]
    picked = np.zeros(n_cand, dtype=np.bool_)
    used = np.zeros((q, sides_max), dtype=np.bool_)
    out = np.empty(n_cand, dtype=np.int64)
    n_out = 0
    got = 0
    while got < need and n_out < n_cand:
        used[:, :] = False
        for t in range(n_cand):
            if picked[t]:
                continue
            s = candidates[t]
            clash = False
            for d in range(q):
                if used[d, coords[s, d]]:
                    clash = True
                    break
            if clash:
                continue
            picked[t] = True
            for d in range(q):
                used[d, coords[s, d]] = True
            out[n_out] = s
            n_out += 1
            got += take[s]
            if got >= need:
                break
    return out[:n_out]
