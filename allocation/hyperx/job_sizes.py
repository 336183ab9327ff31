"""How many nodes the jobs of a real machine ask for: the size law of Lublin and
Feitelson's model of rigid batch jobs (U. Lublin and D. G. Feitelson, "The workload on
parallel supercomputers: modeling the characteristics of rigid jobs", J. Parallel
Distrib. Comput. 63(11), 2003), with its published parameters.

Serial with probability ``SERIAL_PROB = 0.2927``; otherwise ``log2(size)`` is drawn
from a two-stage uniform distribution (``[ULOW, UMED]`` with probability ``UPROB =
0.875``, else ``[UMED, UHI]``), with ``ULOW = 1.2``, ``UHI = log2(machine nodes)`` and
``UMED = UHI - 2`` (the published 5 for 128 nodes); a share ``POW2_PROB = 0.6686`` of
jobs round the exponent to a power of two. Both the what-if's synthetic job logs and
the calibration's aged machines draw their jobs' sizes here.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["LUBLIN_SIZES", "lublin_sizes"]

#: The published size parameters (names as in the paper's model).
LUBLIN_SIZES = {"SERIAL_PROB": 0.2927, "POW2_PROB": 0.6686, "ULOW": 1.2, "UPROB": 0.875,
                "UMED_BELOW_UHI": 2.0}


def lublin_sizes(rng: np.random.Generator, count: int, n_nodes: int,
                 params: dict | None = None) -> np.ndarray:
    """``count`` job sizes in 1..``n_nodes`` (int64), drawn from ``rng``.

    >>> sizes = lublin_sizes(np.random.default_rng(0), 10_000, 512)
    >>> bool(0.25 < (sizes == 1).mean() < 0.34), int(sizes.min()), int(sizes.max()) <= 512
    (True, 1, True)
    """
    p = {**LUBLIN_SIZES, **(params or {})}
    uhi = math.log2(n_nodes)
    ulow = min(p["ULOW"], uhi)
    umed = min(max(uhi - p["UMED_BELOW_UHI"], ulow), uhi)
    u = rng.random(count)
    low_stage = rng.random(count) <= p["UPROB"]
    par = np.where(low_stage, rng.uniform(ulow, umed, count), rng.uniform(umed, uhi, count))
    pow2 = u <= p["SERIAL_PROB"] + p["POW2_PROB"]
    par = np.where(pow2, np.floor(par + 0.5), par)
    sizes = np.floor(np.power(2.0, par) + 0.5).astype(np.int64)
    sizes[u <= p["SERIAL_PROB"]] = 1
    return np.clip(sizes, 1, n_nodes)
