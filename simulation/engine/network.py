"""Flat integer tables describing a HyperX network for the cycle loop.

Every switch has ``Pn = sum(n_d - 1)`` network ports followed by ``c``
endpoint ports.  Port ``dim_base[d] + o`` of switch ``s`` leads, in dimension
``d``, to the switch whose ``d``-th coordinate is ``o`` if ``o < s_d`` and
``o + 1`` otherwise.  The global id of a port is ``s * Pt + local`` with
``Pt = Pn + c``; a port is full duplex, so the same id names its input and
its output side.  Endpoint ``e`` sits on switch ``e // c`` at local endpoint
port ``Pn + e % c``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from allocation.hyperx.shape import MachineShape

__all__ = ["Network", "build_network"]


@dataclass(frozen=True)
class Network:
    """Topology tables of a HyperX (all arrays ``int32`` unless noted).

    Attributes
    ----------
    sides : ndarray
        Switches per dimension.
    concentration : int
        Endpoints per switch.
    coords : ndarray, shape (S, q)
        Coordinates of each switch (C order, ``np.unravel_index``).
    strides : ndarray
        Switch-index stride of each dimension.
    dim_base : ndarray
        First local port of each dimension.
    net_ports, ports_per_switch : int
        ``Pn`` and ``Pt``.
    out_down_in : ndarray, shape (S * Pt,)
        Global input port fed by each output port, ``-1`` for ejection.
    in_up_out : ndarray, shape (S * Pt,)
        Global output port feeding each input port, ``-1`` for injection.
    port_dst_switch : ndarray, shape (S * Pt,)
        Switch at the far end of each network output port, ``-1`` otherwise.

    Examples
    --------
    >>> net = build_network((3, 2), 2)
    >>> net.switches, net.net_ports, net.ports_per_switch, net.endpoints
    (6, 3, 5, 12)
    >>> int(net.port_dst_switch[0]), int(net.port_dst_switch[2])  # switch 0 = (0, 0)
    (2, 1)
    """

    sides: np.ndarray
    concentration: int
    coords: np.ndarray
    strides: np.ndarray
    dim_base: np.ndarray
    net_ports: int
    ports_per_switch: int
    out_down_in: np.ndarray
    in_up_out: np.ndarray
    port_dst_switch: np.ndarray

    @property
    def switches(self) -> int:
        """Number of switches."""
        return int(self.coords.shape[0])

    @property
    def endpoints(self) -> int:
        """Number of endpoints."""
        return self.switches * self.concentration

    @property
    def ports(self) -> int:
        """Number of ports (network and endpoint) over all switches."""
        return self.switches * self.ports_per_switch

    def distance(self, a: int, b: int) -> int:
        """Hamming distance between switches ``a`` and ``b``."""
        return int(np.count_nonzero(self.coords[a] != self.coords[b]))


def build_network(sides: tuple[int, ...], concentration: int) -> Network:
    """Build the port tables of a HyperX of ``sides`` and ``concentration``."""
    shape = MachineShape(sides, concentration)
    sides_a = np.asarray(shape.sides, dtype=np.int64)
    q = shape.dimensions
    n_sw = shape.switch_count
    coords = shape.switch_coords()
    strides = np.ones(q, dtype=np.int64)
    for d in range(q - 2, -1, -1):
        strides[d] = strides[d + 1] * sides_a[d + 1]
    dim_base = np.zeros(q, dtype=np.int64)
    if q > 1:
        dim_base[1:] = np.cumsum(sides_a[:-1] - 1)
    pn = int(np.sum(sides_a - 1))
    pt = pn + concentration
    out_down_in = np.full(n_sw * pt, -1, dtype=np.int64)
    port_dst = np.full(n_sw * pt, -1, dtype=np.int64)
    sw = np.arange(n_sw)
    for d in range(q):
        sd = coords[:, d]
        for o in range(sides_a[d] - 1):
            j = np.where(o < sd, o, o + 1)  # neighbour's coordinate in dimension d
            nb = sw + (j - sd) * strides[d]
            back = np.where(sd < j, sd, sd - 1)  # port of nb leading back to s
            out_down_in[sw * pt + dim_base[d] + o] = nb * pt + dim_base[d] + back
            port_dst[sw * pt + dim_base[d] + o] = nb
    in_up_out = np.full(n_sw * pt, -1, dtype=np.int64)
    net = out_down_in >= 0
    in_up_out[out_down_in[net]] = np.nonzero(net)[0]
    return Network(
        sides=sides_a.astype(np.int32),
        concentration=int(concentration),
        coords=coords.astype(np.int32),
        strides=strides.astype(np.int32),
        dim_base=dim_base.astype(np.int32),
        net_ports=pn,
        ports_per_switch=pt,
        out_down_in=out_down_in.astype(np.int32),
        in_up_out=in_up_out.astype(np.int32),
        port_dst_switch=port_dst.astype(np.int32),
    )
