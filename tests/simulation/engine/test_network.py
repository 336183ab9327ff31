"""Port tables of the HyperX network."""

from __future__ import annotations

import numpy as np
import pytest

from simulation.engine.network import build_network


@pytest.mark.parametrize(("sides", "c"), [((8, 8), 8), ((3, 4, 2), 2), ((5,), 3)])
def test_links_are_full_duplex_and_hamming(sides: tuple, c: int) -> None:
    net = build_network(sides, c)
    n_sw = int(np.prod(sides))
    assert net.switches == n_sw and net.endpoints == n_sw * c
    out = net.out_down_in
    net_ports = np.nonzero(out >= 0)[0]
    # number of directed links: every switch has sum(n_d - 1) neighbours
    assert net_ports.size == n_sw * sum(s - 1 for s in sides)
    # the reverse direction of a link exists and is the same physical port pair
    assert np.array_equal(net.in_up_out[out[net_ports]], net_ports)
    src = net_ports // net.ports_per_switch
    dst = net.port_dst_switch[net_ports]
    assert np.all((net.coords[src] != net.coords[dst]).sum(axis=1) == 1)
    # every neighbour reached exactly once
    pairs = set(zip(src.tolist(), dst.tolist(), strict=True))
    assert len(pairs) == net_ports.size
    # switch index is C-order ravel of the coordinates
    assert np.array_equal(
        np.ravel_multi_index(tuple(net.coords.T), sides), np.arange(n_sw)
    )
