"""Slurm topology files for a HyperX machine (Slurm has no HyperX plugin).

Pure text generation from the machine's shape and hostnames (in endpoint
order), so it needs no database. topology/tree can only say which switches
belong together; Slurm's best fit then packs an unpinned job into the smallest
group that has room, so the grouping decides the shape of the placement. Kinds:

* ``tree-nested`` (the default of ``hx-topology``): groups along *diagonals*
  (switches no two of which share a row or a column, the study's Diagonal),
  nested in halves: pairs of switches, then halves of a diagonal, the
  diagonal, pairs of neighbouring diagonals, ... up to one root. A job of 16,
  32, 64 or 128 nodes that finds a wholly free group of its size gets exactly
  that group: whole switches, transversal. Measured best of the kinds on a
  half-full machine (docs/operations.md, "Slurm's own placement").
* ``tree-diagonal``: one parent per diagonal, then the root;
* ``tree``: one parent per *row* (a line along the last dimension), then the
  root: Slurm packs jobs into rows, the study's Row policy (kept for sites that
  use it; ``--kind tree`` still means this);
* ``block``: ``topology.conf`` for topology/block (Slurm 23.11+): one block per row;
* ``features``: ``NodeName=... Features=hx_row<R>,hx_col<C>`` lines for
  slurm.conf, so jobs can ask for ``--constraint=hx_row3``.

Every tree has one leaf switch per HyperX switch. Slurm's select/linear, once it
has chosen the group (the lowest level with enough free nodes, the one with the
fewest free nodes among those), takes that group's leaves with the *fewest*
free nodes first and, among equals, the one listed first: so the diagonal trees
list their leaves diagonal by diagonal.

Diagonal ``p`` of a machine with sides ``(n_0, ..., n_last)`` holds the
switches whose coordinates satisfy ``s_last - (s_0 + ... ) = p (mod n_last)``:
in 2D, ``(i, (i + p) mod n)``, one switch per row and (when the sides are
equal) one per column. Neighbouring diagonals pair up because the union of
diagonals ``p`` and ``p + 1`` has the higher partition bandwidth (1.5 exact on
8x8, against 1.0 for ``p`` and ``p + 4``).

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
>>> print(nested_diagonal_tree("hx", (2, 2), 2, names), end="")
# topology.conf (topology/tree) for HyperX hx: 2x2 switches, c = 2; groups: nested diagonals
SwitchName=hx_s0_0 Nodes=n[00-01]
SwitchName=hx_s1_1 Nodes=n[06-07]
SwitchName=hx_s0_1 Nodes=n[02-03]
SwitchName=hx_s1_0 Nodes=n[04-05]
SwitchName=hx_diag0 Switches=hx_s0_0,hx_s1_1
SwitchName=hx_diag1 Switches=hx_s0_1,hx_s1_0
SwitchName=hx_root Switches=hx_diag[0-1]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from hxportal.hostlists import compress

#: topology/tree groupings, in the order the docs compare them.
TREE_KINDS = ("tree-nested", "tree-diagonal", "tree")
#: What ``hx-topology``, the API and the local cluster use unless told.
DEFAULT_KIND = "tree-nested"
FORMATS = (*TREE_KINDS, "block", "features")
#: One line each, for help texts and the API schema.
DESCRIPTIONS = {
    "tree-nested": "topology/tree, nested diagonal groups (2, 4, ... switches, "
                   "diagonals, pairs of diagonals): Slurm packs jobs along diagonals",
    "tree-diagonal": "topology/tree, one parent per diagonal",
    "tree": "topology/tree, one parent per row (Slurm packs jobs into rows)",
    "block": "topology/block (Slurm 23.11+), one block per row",
    "features": "slurm.conf node features hx_row<R>, hx_col<C>",
}
Group = tuple[str, list[str]]


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


def _leaf_lines(name: str, sides: Sequence[int], c: int, hostnames: Sequence[str],
                order: Sequence[int]) -> list[str]:
    return [f"SwitchName={_switch_name(name, _coords(s, sides))} "
            f"Nodes={compress(hostnames[s * c:(s + 1) * c])}" for s in order]


def _group_lines(groups: Sequence[Group]) -> list[str]:
    return [f"SwitchName={group} Switches={compress(children)}" for group, children in groups]


def tree_topology(name: str, sides: Sequence[int], c: int, hostnames: Sequence[str]) -> str:
    """Leaves in index order, a parent per row, one root."""
    lines = [_header("tree", name, sides, c)]
    lines += _leaf_lines(name, sides, c, hostnames, range(math.prod(sides)))
    per_row = sides[-1]
    groups = [(f"{name}_row{row}",
               [_switch_name(name, _coords(row * per_row + k, sides)) for k in range(per_row)])
              for row in range(_rows(sides))]
    groups.append((f"{name}_root", [g for g, _ in groups]))
    return "\n".join(lines + _group_lines(groups)) + "\n"


def diagonals(sides: Sequence[int]) -> list[list[int]]:
    """Switch ids (row-major) per diagonal ``p = s_last - sum(others) mod n_last``.

    >>> diagonals((4, 4))[1]
    [1, 6, 11, 12]
    >>> diagonals((2, 3))
    [[0, 4], [1, 5], [2, 3]]
    """
    last = sides[-1]
    out: list[list[int]] = [[] for _ in range(last)]
    for s in range(math.prod(sides)):
        coords = _coords(s, sides)
        out[(coords[-1] - sum(coords[:-1])) % last].append(s)
    return out


def _halves(items: list[str]) -> list[list[str]]:
    """Consecutive pairs; an odd one out joins the last pair."""
    groups = [items[i:i + 2] for i in range(0, len(items) - len(items) % 2, 2)]
    if len(items) % 2:
        if groups:
            groups[-1].append(items[-1])
        else:
            groups = [items[:]]
    return groups


def _nest(children: list[str], top: str, prefix: str) -> list[Group]:
    """Binary groups over ``children`` up to one group named ``top``."""
    groups: list[Group] = []
    level = 1
    while True:
        parts = _halves(children)
        if len(parts) == 1:
            groups.append((top, parts[0]))
            return groups
        names = [f"{prefix}_l{level}_{k}" for k in range(len(parts))]
        groups += list(zip(names, parts, strict=True))
        children, level = names, level + 1


def _diagonal_tree(name: str, sides: Sequence[int], c: int, hostnames: Sequence[str],
                   nested: bool) -> str:
    diags = diagonals(sides)
    suffix = "nested diagonals" if nested else "diagonals"
    lines = [f"{_header('tree', name, sides, c)}; groups: {suffix}"]
    lines += _leaf_lines(name, sides, c, hostnames, [s for d in diags for s in d])
    groups: list[Group] = []
    for p, members in enumerate(diags):
        leaves = [_switch_name(name, _coords(s, sides)) for s in members]
        top = f"{name}_diag{p}"
        groups += _nest(leaves, top, top) if nested and len(leaves) > 2 else [(top, leaves)]
    tops = [f"{name}_diag{p}" for p in range(len(diags))]
    groups += (_nest(tops, f"{name}_root", f"{name}_diags") if nested
               else [(f"{name}_root", tops)])
    return "\n".join(lines + _group_lines(groups)) + "\n"


def diagonal_tree(name: str, sides: Sequence[int], c: int, hostnames: Sequence[str]) -> str:
    """Leaves diagonal by diagonal, a parent per diagonal, one root."""
    return _diagonal_tree(name, sides, c, hostnames, nested=False)


def nested_diagonal_tree(name: str, sides: Sequence[int], c: int,
                         hostnames: Sequence[str]) -> str:
    """Leaves diagonal by diagonal; inside each diagonal binary groups (pairs,
    halves) up to the diagonal; neighbouring diagonals pair up to the root."""
    return _diagonal_tree(name, sides, c, hostnames, nested=True)


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
    writers = {"tree": tree_topology, "tree-diagonal": diagonal_tree,
               "tree-nested": nested_diagonal_tree, "block": block_topology,
               "features": node_features}
    if kind not in writers:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}")
    if len(hostnames) != math.prod(sides) * c:
        raise ValueError("need one hostname per endpoint")
    return writers[kind](name, tuple(sides), c, hostnames)
