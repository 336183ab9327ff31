"""Routing functions of the cycle loop (numba).

All four algorithms are deadlock free by construction through the VC a hop
may use.  The ``V`` VCs of a set are split into ``H`` classes, class ``h``
being VCs ``[h V // H, (h + 1) V // H)``; a packet only ever moves to the
same or a higher class, so channel dependencies are acyclic.

- ``dor``: dimension order (lowest differing dimension first); dimension
  order alone is acyclic, so all ``V`` VCs form one class (``H = 1``).
- ``min``: adaptive minimal; among the minimal next hops (one per unaligned
  dimension) the one whose VC (of the packet's class, the emptiest of the
  class) is least occupied: packets in that output VC plus packets it has
  sent that still hold a slot of the downstream input VC, i.e. output queue
  plus used credits.  The packet waits if that VC is full or the crossbar
  output is busy this cycle.  Class = hop count (``H = q``).
- ``valiant``: a random intermediate switch is drawn at injection; the packet
  goes there in dimension order (class 0), then to its destination in
  dimension order (class 1); ``H = 2``.
- ``omniwar``: hop by hop through unaligned dimensions only: in an unaligned
  dimension the minimal hop or, while fewer than ``q`` deroutes were taken,
  any other switch of that dimension.  Cost = occupancy as for ``min`` in
  phits (packets x P), plus :data:`DEROUTE_PENALTY` = 64 phits for a
  deroute; least cost wins, ties broken at random.  Class = hop count
  (``H = 2 q``: at most ``q`` minimal hops and ``q`` deroutes).

Ejection (destination switch reached) may use any VC of the packet's set:
endpoints always consume, so ejection creates no dependency.
"""

from __future__ import annotations

from .loop import (
    DEROUTE_PENALTY,
    F_APP,
    F_DER,
    F_DRANK,
    F_DST,
    F_GEN,
    F_HOPS,
    F_INTER,
    F_MEAS,
    F_READY,
    F_SRC,
    F_STEP,
    F_VCSET,
    N_FIELDS,
    ROUTING_CODES,
    best_vc,
    route,
)

__all__ = [
    "DEROUTE_PENALTY",
    "F_APP",
    "F_DER",
    "F_DRANK",
    "F_DST",
    "F_GEN",
    "F_HOPS",
    "F_INTER",
    "F_MEAS",
    "F_READY",
    "F_SRC",
    "F_STEP",
    "F_VCSET",
    "N_FIELDS",
    "ROUTING_CODES",
    "best_vc",
    "route",
    "vc_classes",
]

def vc_classes(routing: str, dims: int) -> int:
    """Number of VC classes ``H`` used by ``routing``.

    Examples
    --------
    >>> vc_classes("min", 2), vc_classes("omniwar", 2), vc_classes("dor", 3)
    (2, 4, 1)
    """
    return {"dor": 1, "min": dims, "valiant": 2, "omniwar": 2 * dims}[routing]


