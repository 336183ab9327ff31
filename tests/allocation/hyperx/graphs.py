"""The switch graph as networkx sees it: the independent oracle that the topology's
distances, links and convexity are checked against (networkx is a test dependency
only; the core computes these with numpy)."""

from __future__ import annotations

import networkx as nx

from allocation.hyperx import HyperX


def switch_graph(hx: HyperX) -> nx.Graph:
    """Switches as nodes (attribute ``coords``), the HyperX links as edges."""
    g = nx.Graph()
    coords = hx.switch_coords()
    g.add_nodes_from((i, {"coords": tuple(int(x) for x in coords[i])})
                     for i in range(hx.n_switches))
    g.add_edges_from(map(tuple, hx.links().tolist()))
    return g
