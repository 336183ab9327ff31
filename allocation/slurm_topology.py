"""Slurm topology files for a HyperX machine (Slurm has no HyperX plugin).

Pure text generation from the machine's shape and hostnames (in endpoint
order), so it needs no database:

* ``tree``: ``topology.conf`` for topology/tree: a leaf switch per HyperX
  switch, a parent per row (a line along the last dimension), one root;
* ``block``: ``topology.conf`` for topology/block: one block per row;
* ``features``: ``NodeName=... Features=hx_row<R>,hx_col<C>`` lines for
  slurm.conf, so jobs can ask for ``--constraint=hx_row3``.

>>> names = [f"n{i:02d}" for i in range(8)]
>>> print(tree_topology("hx", (2, 2), 2, names), end="")
# topology.conf (topology/tree) for HyperX hx: 2x2 switches, c = 2
SwitchName=hx_s0_0 Nodes=n[00-01]
SwitchName=hx_s0_1 Nodes=n[02-03]
SwitchName=hx_s1_0 Nodes=n[04-05]
SwitchName=hx_s1_1 Nodes=n[06-07]
SwitchName=hx_row0 Switches=hx_s0_[0-1]
SwitchName=hx_row1 Switches=hx_s1_[0-1]
SwitchName=hx_root Switches=hx_row[0-1]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from hxportal.hostlists import compress

FORMATS = ("tree", "block", "features")


def _coords(switch: int, sides: Sequence[int]) -> list[int]:
    out = []
    for side in reversed(sides):
        out.append(switch % side)
        switch //= side
    return out[::-1]


def _header(kind: str, name: str, sides: Sequence[int], c: int) -> str:
    shape = "x".join(str(s) for s in sides)
    return f"# topology.conf (topology/{kind}) for HyperX {name}: {shape} switches, c = {c}"


def _rows(sides: Sequence[int]) -> int:
    return math.prod(sides[:-1]) if len(sides) > 1 else 1


def _switch_name(name: str, coords: Sequence[int]) -> str:
    return f"{name}_s" + "_".join(str(x) for x in coords)


def tree_topology(name: str, sides: Sequence[int], c: int, hostnames: Sequence[str]) -> str:
    lines = [_header("tree", name, sides, c)]
    switches = math.prod(sides)
    for s in range(switches):
        lines.append(f"SwitchName={_switch_name(name, _coords(s, sides))} "
                     f"Nodes={compress(hostnames[s * c:(s + 1) * c])}")
    per_row = sides[-1]
    for row in range(_rows(sides)):
        members = [_switch_name(name, _coords(row * per_row + k, sides)) for k in range(per_row)]
        lines.append(f"SwitchName={name}_row{row} Switches={compress(members)}")
    rows = [f"{name}_row{r}" for r in range(_rows(sides))]
    lines.append(f"SwitchName={name}_root Switches={compress(rows)}")
    return "\n".join(lines) + "\n"


def block_topology(name: str, sides: Sequence[int], c: int, hostnames: Sequence[str]) -> str:
    lines = [_header("block", name, sides, c)]
    row_nodes = sides[-1] * c
    for row in range(_rows(sides)):
        lines.append(f"BlockName={name}_row{row} "
                     f"Nodes={compress(hostnames[row * row_nodes:(row + 1) * row_nodes])}")
    sizes, size = [], row_nodes
    while size <= len(hostnames):
        sizes.append(str(size))
        size *= 2
    lines.append(f"BlockSizes={','.join(sizes)}")
    return "\n".join(lines) + "\n"


def switch_features(sides: Sequence[int], switch: int) -> list[str]:
    """The node features of one switch (row-major index): row, column, plane.

    >>> switch_features((2, 3, 4), 13)
    ['hx_row0', 'hx_col1', 'hx_d0_1']
    """
    coords = _coords(switch, sides)
    row = coords[-2] if len(coords) >= 2 else 0
    features = [f"hx_row{row}", f"hx_col{coords[-1]}"]
    return features + [f"hx_d{k}_{v}" for k, v in enumerate(coords[:-2])]


def node_features(name: str, sides: Sequence[int], c: int, hostnames: Sequence[str]) -> str:
    """One line per switch: its nodes share row, column (and plane) features."""
    lines = [f"# slurm.conf node features for HyperX {name}: hx_row<R>, hx_col<C>"
             + (", hx_d<k>_<v> for leading dimensions" if len(sides) > 2 else "")]
    for s in range(math.prod(sides)):
        lines.append(f"NodeName={compress(hostnames[s * c:(s + 1) * c])} "
                     f"Features={','.join(switch_features(sides, s))}")
    return "\n".join(lines) + "\n"


def render(kind: str, name: str, sides: Sequence[int], c: int, hostnames: Sequence[str]) -> str:
    """Dispatch on ``kind`` (one of :data:`FORMATS`)."""
    writers = {"tree": tree_topology, "block": block_topology, "features": node_features}
    if kind not in writers:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}")
    if len(hostnames) != math.prod(sides) * c:
        raise ValueError("need one hostname per endpoint")
    return writers[kind](name, tuple(sides), c, hostnames)
