"""Which nodes Slurm gives an unpinned job under a topology/tree grouping (a model).

Slurm 22.05's select/linear with topology/tree places ``sbatch -N n`` (whole
nodes, no ``-w``) in two steps, which :func:`best_fit` repeats:

1. among the groups (switches in Slurm's words, leaves included) with at least
   ``n`` free nodes, the one of the lowest level, and of those the one with the
   fewest free nodes; the first in file order on a tie;
2. inside it, leaf switches by fewest free nodes first (file order on a tie),
   all of a leaf's free nodes (in node order) before the next, until ``n``.

That is why a grouping steers placements, and why partly used switches go
first. The model reproduced every one of the 75 plain-``sbatch`` placements of
``benchmarks/bench_slurm_placement.py`` on the real slurmctld (three groupings,
five occupancies, five sizes); the benchmark checks it again on each run. It is
for reasoning and tests: the portal never places jobs with it. Levels are
counted from the leaves (a group's level is one more than its highest child's),
which is Slurm's count on the balanced trees of ``allocation.slurm_topology``.

>>> from allocation.slurm_topology import render
>>> names = [f"n{i:02d}" for i in range(16)]
>>> tree = parse_tree(render("tree-nested", "hx", (2, 2), 4, names))
>>> best_fit(tree, names, 8)            # diagonal 0: switches (0, 0) and (1, 1)
['n00', 'n01', 'n02', 'n03', 'n12', 'n13', 'n14', 'n15']
>>> best_fit(tree, names[1:], 4)        # a whole free switch, the first listed
['n12', 'n13', 'n14', 'n15']
>>> best_fit(tree, names[1:], 6)        # the fuller diagonal, its partly used switch first
['n01', 'n02', 'n03', 'n12', 'n13', 'n14']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hxportal.hostlists import expand


@dataclass(frozen=True)
class Group:
    """One ``SwitchName`` line: its level (leaves 0) and every node below it."""

    name: str
    level: int
    nodes: frozenset[str]


def parse_tree(text: str) -> list[Group]:
    """The groups of a topology/tree ``topology.conf``, in file order (children
    must come before their parents, as Slurm also requires)."""
    groups: list[Group] = []
    known: dict[str, Group] = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
        if "SwitchName" not in fields:
            raise ValueError(f"not a topology/tree line: {line[:60]!r}")
        if "Nodes" in fields:
            group = Group(fields["SwitchName"], 0, frozenset(expand(fields["Nodes"])))
        else:
            try:
                children = [known[name] for name in expand(fields.get("Switches", ""))]
            except KeyError as exc:
                raise ValueError(f"switch {exc.args[0]!r} is used before it is defined") from exc
            group = Group(fields["SwitchName"], 1 + max(c.level for c in children),
                          frozenset().union(*(c.nodes for c in children)))
        known[group.name] = group
        groups.append(group)
    return groups


def best_fit(groups: Sequence[Group], free: Sequence[str], n: int) -> list[str] | None:
    """The ``n`` nodes Slurm would take from ``free`` (in node order), in node
    order; None when no group has ``n`` free nodes."""
    order = {name: i for i, name in enumerate(free)}
    free_of = [sorted(g.nodes & order.keys(), key=order.__getitem__) for g in groups]
    best = None
    for j, group in enumerate(groups):
        if len(free_of[j]) < n:
            continue
        if best is None or (group.level, len(free_of[j])) < (groups[best].level,
                                                             len(free_of[best])):
            best = j
    if best is None:
        return None
    inside = set(free_of[best])
    leaves = [j for j, g in enumerate(groups)
              if g.level == 0 and free_of[j] and set(free_of[j]) <= inside]
    taken: list[str] = []
    while len(taken) < n and leaves:
        j = min(leaves, key=lambda k: (len(free_of[k]), k))
        leaves.remove(j)
        taken += free_of[j][:n - len(taken)]
    return sorted(taken, key=order.__getitem__)
