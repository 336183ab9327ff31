"""The switch grid every page draws (machine, job, recommendation, compare, health).

One presenter, one partial (``templates/inc/switch_grid.html``). A node cell
shows four things on separate visual channels, each also exposed as a data
attribute for tests and scripts:

========== ======================================== ===================
channel    what                                     attribute
========== ======================================== ===================
fill       the job holding the node: 8 colours x 4  ``data-job``
           patterns (32 distinct), disjoint from
           the state colours; "held" (grey, another
           job or a private one) differs from "free"
           (white); on the health page: suspicion
border     the node's state: up (thin grey),        ``data-state``
           drained (amber), down (red, with a cross)
glyph      the allocation role: spare (corner       ``data-role``
           notch), excluded (faded, hollow notch)
ring       selection: the page's job or candidate   ``data-selected``
========== ======================================== ===================

The last two coordinates are the grid's rows and columns; any leading
coordinates select a plane (a contiguous range of switch indices). A plane
with more than :data:`MAX_NODE_CELLS` nodes is drawn per switch (each switch
cell summarises its nodes: counts by state, held and free, jobs) with a
drill-down to the switch's own nodes, so a 65,536-node machine renders fast.
Node cells are rendered here, in Python, not by the template engine.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from allocation.choices import AllocationRole, NodeState
from allocation.services import occupancy
from allocation.services.occupancy import Machine
from hxportal import hostlists
from hxportal.text import pluralize

#: Above this many nodes in a plane, switch cells summarise their nodes.
MAX_NODE_CELLS = 4096
JOB_COLOURS = 8
JOB_PATTERNS = 4
STATES = (NodeState.UP, NodeState.DRAINED, NodeState.DOWN)
STATE_WORDS = {NodeState.UP: "up", NodeState.DRAINED: "drained", NodeState.DOWN: "down"}
PATTERN_WORDS = ("solid", "striped", "dotted", "barred")


@dataclass(frozen=True)
class GridShape:
    sides: tuple[int, ...]

    @property
    def rows(self) -> int:
        return self.sides[-2] if len(self.sides) >= 2 else 1

    @property
    def cols(self) -> int:
        return self.sides[-1]

    @property
    def plane_size(self) -> int:
        return self.rows * self.cols

    @property
    def planes(self) -> int:
        return math.prod(self.sides[:-2]) if len(self.sides) > 2 else 1

    def plane_coords(self, plane: int) -> list[int]:
        lead = self.sides[:-2]
        coords, rest = [], plane
        for side in reversed(lead):
            coords.append(rest % side)
            rest //= side
        return list(reversed(coords))

    def plane_label(self, plane: int) -> str:
        if len(self.sides) <= 2:
            return "all"
        return ", ".join(f"d{k}={v}" for k, v in enumerate(self.plane_coords(plane)))

    def plane_labels(self) -> list[str]:
        return [self.plane_label(p) for p in range(self.planes)]

    def switch_range(self, plane: int) -> tuple[int, int]:
        start = plane * self.plane_size
        return start, start + self.plane_size

    def coords(self, switch: int) -> tuple[int, ...]:
        out = []
        for side in reversed(self.sides):
            out.append(switch % side)
            switch //= side
        return tuple(reversed(out))

    def clamp_plane(self, raw: Any) -> int:
        try:
            plane = int(raw)
        except (TypeError, ValueError):
            return 0
        return min(max(plane, 0), self.planes - 1)

    @property
    def row_axis(self) -> str:
        return f"d{len(self.sides) - 2}" if len(self.sides) >= 2 else ""

    @property
    def col_axis(self) -> str:
        return f"d{len(self.sides) - 1}"


def job_style(position: int) -> tuple[int, int]:
    """(colour, pattern) of the ``position``-th job: 32 distinct looks, then repeats.

    >>> job_style(0), job_style(7), job_style(8), job_style(33)
    ((0, 0), (7, 0), (0, 1), (1, 0))
    """
    return position % JOB_COLOURS, (position // JOB_COLOURS) % JOB_PATTERNS


def job_palette(job_ids: Iterable[int]) -> dict[int, tuple[int, int]]:
    """A stable (colour, pattern) per job, in id order."""
    return {job_id: job_style(i) for i, job_id in enumerate(sorted(set(job_ids)))}


@dataclass
class NodeInfo:
    """What a cell shows about one node; built by the page's grid function."""
    hostname: str
    switch: int
    local: int
    state: str
    reason: str = ""
    job: int | None = None        # holding job shown by id; None: free or private
    held: bool = False            # some job holds it (shown or not)
    role: str = ""                # primary, spare, excluded, candidate or ""
    fill: str = "free"            # CSS class of the fill channel
    selected: bool = False
    href: str = ""
    note: str = ""                # extra tooltip text (job name, suspicion)
    id: int = 0

    @property
    def role_attr(self) -> str:
        if self.role:
            return self.role
        return "held" if self.held else "free"


@dataclass
class LegendEntry:
    css: str                      # classes of the swatch (a node cell)
    label: str
    count: int | None = None
    job: int | None = None
    href: str = ""
    testid: str = ""
    count_text: str = ""
    detail: str = ""


@dataclass
class SwitchGrid:
    machine: Machine
    shape: GridShape
    plane: int
    mode: str                          # "nodes" or "switches"
    rows: list[dict] = field(default_factory=list)
    col_labels: list[int] = field(default_factory=list)
    legend: dict[str, list[LegendEntry]] = field(default_factory=dict)
    testid: str = "switch-grid"
    compact: bool = False
    plane_param: str = "plane"
    keep_params: list[tuple[str, str]] = field(default_factory=list)
    drill: dict | None = None          # the drilled-down switch: cell html and node rows
    caption: str = ""
    hidden_jobs: int = 0

    @property
    def plane_label(self) -> str:
        return self.shape.plane_label(self.plane)

    @property
    def plane_options(self) -> list[tuple[int, str]]:
        return list(enumerate(self.shape.plane_labels()))

    @property
    def node_cols(self) -> int:
        return max(1, math.ceil(math.sqrt(self.machine.concentration)))


# --------------------------------------------------------------------------
# Rendering cells (Python, not the template engine: 4,096 cells in a few ms)


def _switch_label(shape: GridShape, switch: int) -> str:
    return ",".join(str(c) for c in shape.coords(switch))


def node_classes(node: NodeInfo) -> str:
    parts = ["node", node.fill, f"st-{node.state}"]
    if node.role in (AllocationRole.SPARE, AllocationRole.EXCLUDED):
        parts.append(f"role-{node.role}")
    if node.selected:
        parts.append("sel")
    return " ".join(parts)


def node_title(node: NodeInfo, shape: GridShape) -> str:
    bits = [node.hostname, f"switch ({_switch_label(shape, node.switch)})"]
    state = STATE_WORDS.get(node.state, node.state)
    bits.append(f"{state}: {node.reason}" if node.reason and node.state != NodeState.UP
                else state)
    if node.note:
        bits.append(node.note)
    if node.role:
        bits.append(node.role)
    elif not node.held:
        bits.append("free")
    return " · ".join(bits)


def render_node(node: NodeInfo, shape: GridShape) -> str:
    tag = "a" if node.href else "span"
    href = f' href="{escape(node.href)}"' if node.href else ""
    return (f'<{tag} class="{node_classes(node)}"{href} data-hostname="{escape(node.hostname)}"'
            f' data-state="{node.state}" data-job="{node.job if node.job is not None else ""}"'
            f' data-role="{node.role_attr}" data-selected="{"1" if node.selected else "0"}"'
            f' title="{escape(node_title(node, shape))}"></{tag}>')


def render_switch(shape: GridShape, switch: int, nodes: list[NodeInfo]) -> SafeString:
    label = _switch_label(shape, switch)
    names = hostlists.compress(n.hostname for n in nodes) if nodes else ""
    body = "".join(render_node(n, shape) for n in nodes)
    return mark_safe(  # noqa: S308  # nosec B308 B703 - every value is escaped above
        f'<div class="switch" data-switch="{switch}" data-coords="{label}" '
        f'title="switch ({label}): {escape(names)}">{body}</div>')


def render_summary(shape: GridShape, switch: int, nodes: list[NodeInfo], href: str
                   ) -> SafeString:
    """One switch standing for its nodes: fill = occupancy, border = worst state,
    notch = a spare among them, ring = a selected node among them."""
    states = Counter(n.state for n in nodes)
    held = sum(1 for n in nodes if n.held or n.role == "candidate")
    jobs = sorted({n.job for n in nodes if n.job is not None})
    spares = sum(1 for n in nodes if n.role == AllocationRole.SPARE)
    selected = sum(1 for n in nodes if n.selected)
    worst = (NodeState.DOWN if states[NodeState.DOWN] else
             NodeState.DRAINED if states[NodeState.DRAINED] else NodeState.UP)
    occupancy = 0 if not nodes else math.ceil(4 * held / len(nodes))
    label = _switch_label(shape, switch)
    counts = ", ".join(f"{states[s]} {STATE_WORDS[s]}" for s in STATES if states[s])
    title = (f"switch ({label}): {pluralize(len(nodes), 'node')} ({counts}); {held} held, "
             f"{len(nodes) - held} free"
             + (f"; jobs {', '.join(str(j) for j in jobs[:8])}" if jobs else "")
             + (f"{' …' if len(jobs) > 8 else ''}" if jobs else "")
             + (f"; {spares} spare" if spares else "") + " — open to see its nodes")
    classes = f"switch summary occ-{occupancy} st-{worst}"
    if spares:
        classes += " role-spare"
    if selected:
        classes += " sel"
    return mark_safe(  # noqa: S308  # nosec B308 B703 - every value is escaped above
        f'<a class="{classes}" href="{escape(href)}" data-switch="{switch}" '
        f'data-coords="{label}" data-state="{worst}" data-up="{states[NodeState.UP]}" '
        f'data-drained="{states[NodeState.DRAINED]}" data-down="{states[NodeState.DOWN]}" '
        f'data-held="{held}" data-jobs="{" ".join(str(j) for j in jobs)}" '
        f'title="{escape(title)}"></a>')


# --------------------------------------------------------------------------
# Reading the machine


def _plane_nodes(machine: Machine, shape: GridShape, plane: int) -> list[NodeInfo]:
    start, end = shape.switch_range(plane)
    return [NodeInfo(hostname=hostname, switch=switch, local=local, state=state,
                     reason=reason, id=node_id)
            for node_id, switch, local, hostname, state, reason
            in occupancy.plane_nodes(machine, start, end)]


def _active_allocations(machine: Machine, shape: GridShape, plane: int
                        ) -> dict[int, tuple[int, str]]:
    """node id -> (job id, role) of the active allocations in the plane."""
    return occupancy.active_allocations(machine, *shape.switch_range(plane))


def _rows(grid: SwitchGrid, nodes: list[NodeInfo], switch_href: Callable[[int], str]) -> None:
    shape, plane = grid.shape, grid.plane
    start, _ = shape.switch_range(plane)
    by_switch: dict[int, list[NodeInfo]] = defaultdict(list)
    for node in nodes:
        by_switch[node.switch].append(node)
    for r in range(shape.rows):
        cells = []
        for c in range(shape.cols):
            switch = start + r * shape.cols + c
            members = sorted(by_switch.get(switch, []), key=lambda n: n.local)
            if grid.mode == "nodes":
                cells.append(render_switch(shape, switch, members))
            else:
                cells.append(render_summary(shape, switch, members, switch_href(switch)))
        grid.rows.append({"label": r if r % _step(shape.rows) == 0 else "", "cells": cells})
    grid.col_labels = [c if c % _step(shape.cols) == 0 else "" for c in range(shape.cols)]


def _step(side: int) -> int:
    """Label every coordinate up to 32, then about 16 labels per axis."""
    return 1 if side <= 32 else math.ceil(side / 16)


def _mode(machine: Machine, shape: GridShape) -> str:
    return "nodes" if shape.plane_size * machine.concentration <= MAX_NODE_CELLS else "switches"


def _state_legend(nodes: list[NodeInfo], totals: dict[str, int] | None) -> list[LegendEntry]:
    here = Counter(n.state for n in nodes)
    out = []
    for s in STATES:
        label = {NodeState.UP: "up: thin grey border",
                 NodeState.DRAINED: "drained: amber border",
                 NodeState.DOWN: "down: red border, cross"}[s]
        total = f" of {totals[s]:,}" if totals is not None and totals[s] != here[s] else ""
        out.append(LegendEntry(f"node free st-{s}", label, here[s], testid=f"legend-state-{s}",
                               count_text=f"{here[s]:,}{total}"))
    return out


def _count_entry(css: str, label: str, count: int, testid: str) -> LegendEntry:
    return LegendEntry(css, label, count, testid=testid, count_text=f"{count:,}")


def _finish(grid: SwitchGrid, nodes: list[NodeInfo], request, drill_param: str = "switch"
            ) -> SwitchGrid:
    params = [(k, v) for k, v in (request.GET.items() if request is not None else [])
              if k not in (grid.plane_param, drill_param)]
    grid.keep_params = params

    def switch_href(switch: int) -> str:
        query = urlencode([*params, (grid.plane_param, grid.plane), (drill_param, switch)])
        return f"?{query}#drill"

    _rows(grid, nodes, switch_href)
    raw = request.GET.get(drill_param) if request is not None else None
    if grid.mode == "switches" and raw is not None and str(raw).isdigit():
        switch = int(raw)
        start, end = grid.shape.switch_range(grid.plane)
        if start <= switch < end:
            members = sorted((n for n in nodes if n.switch == switch), key=lambda n: n.local)
            grid.drill = {"switch": switch, "label": _switch_label(grid.shape, switch),
                          "cell": render_switch(grid.shape, switch, members),
                          "nodes": members}
    return grid


# --------------------------------------------------------------------------
# The grids of the pages


def machine_grid(machine: Machine, *, request=None, reader=None, plane: Any = None,
                 testid: str = "switch-grid") -> SwitchGrid:
    """Every job in its colour, roles, states; another user's private job as held."""
    shape = GridShape(tuple(machine.sides))
    plane = shape.clamp_plane(plane)
    nodes = _plane_nodes(machine, shape, plane)
    allocations = _active_allocations(machine, shape, plane)
    active, shown = occupancy.jobs_on_machine(machine, reader)
    palette = job_palette(j.pk for j in active)
    names = {j.pk: j.name for j in active if j.pk in shown}
    job_urls = {pk: reverse("allocation:job_detail", args=[pk]) for pk in shown}
    for node in nodes:
        held = allocations.get(node.id)
        if held is None:
            continue
        job_id, role = held
        node.held, node.role = True, role
        if job_id in shown:
            colour, pattern = palette[job_id]
            node.job, node.fill = job_id, f"job-c{colour} job-p{pattern}"
            node.note = f"job {job_id} {names[job_id]}"
            node.href = job_urls[job_id]
        else:  # HX_PRIVATE_DATA: neither the job nor its roles
            node.fill, node.note, node.role = "held", "held by another user's job", ""
    grid = SwitchGrid(machine, shape, plane, _mode(machine, shape), testid=testid)
    totals = occupancy.state_counts(machine)
    in_plane = Counter(node.job for node in nodes if node.job is not None)
    held_total = occupancy.held_per_job(machine)
    grid.legend = {
        "states": _state_legend(nodes, totals),
        "fills": [
            _count_entry("node free st-up", "free", sum(1 for n in nodes if not n.held),
                         "legend-free"),
            *([_count_entry("node held st-up", "held by a private job",
                            sum(1 for n in nodes if n.held and n.job is None), "legend-held")]
              if any(n.held and n.job is None for n in nodes) else []),
        ],
        "roles": _role_legend(nodes),
        "jobs": [],
    }
    if totals["held_not_up"]:
        grid.caption = (f"{pluralize(totals['held_not_up'], 'node')} inside jobs "
                        f"{'is' if totals['held_not_up'] == 1 else 'are'} drained or down.")
    for job in active:
        if job.pk not in shown:
            continue
        colour, pattern = palette[job.pk]
        grid.legend["jobs"].append(LegendEntry(
            f"node job-c{colour} job-p{pattern} st-up", f"job {job.pk} · {job.name}",
            held_total.get(job.pk, 0), job=job.pk, href=job_urls[job.pk],
            testid=f"legend-job-{job.pk}",
            count_text=f"{in_plane.get(job.pk, 0):,} here of {held_total.get(job.pk, 0):,}",
            detail=f"{PATTERN_WORDS[pattern]}, {job.policy or 'no policy'}, "
                   f"{job.owner.username}"))
    grid.hidden_jobs = len(active) - len(shown)
    return _finish(grid, nodes, request)


def _role_legend(nodes: list[NodeInfo]) -> list[LegendEntry]:
    roles = Counter(n.role for n in nodes)
    out = []
    out.append(_count_entry("node free st-up role-spare", "spare: corner notch",
                            roles[AllocationRole.SPARE], "legend-spare"))
    if roles[AllocationRole.EXCLUDED]:
        out.append(_count_entry("node free st-up role-excluded", "excluded: faded, hollow notch",
                                roles[AllocationRole.EXCLUDED], "legend-excluded"))
    return out


def job_grid(job, *, request=None, reader=None) -> SwitchGrid:
    """One job's nodes ringed in its colour with their roles; other jobs held, grey."""
    machine = job.machine
    shape = GridShape(tuple(machine.sides))
    mine = occupancy.job_switches(job)
    default = min(mine) // shape.plane_size if mine else 0
    raw = request.GET.get("plane") if request is not None else None
    plane = shape.clamp_plane(raw if raw is not None else default)
    nodes = _plane_nodes(machine, shape, plane)
    allocations = _active_allocations(machine, shape, plane)
    start, end = shape.switch_range(plane)
    # A finished job: its last allocation still tells where it ran (drawn unfilled).
    past = occupancy.past_roles(job, start, end)
    for node in nodes:
        held = allocations.get(node.id)
        if held is not None and held[0] == job.pk:
            node.held, node.role, node.job = True, held[1], job.pk
            node.fill, node.selected = "job-c0 job-p0", True
            node.note = f"job {job.pk} {job.name}"
        elif node.id in past:
            node.role, node.selected = past[node.id], True
            node.note = f"job {job.pk} {job.name} (released)"
            if held is not None:
                node.held, node.fill = True, "held"
        elif held is not None:
            node.held, node.fill = True, "held"
            node.note = "held by another job"
    grid = SwitchGrid(machine, shape, plane, _mode(machine, shape), testid="job-grid")
    # Each node counts once: the job's (ringed, also when released and now free or
    # held by another job), else held by another job, else free.
    grid.legend = {
        "states": _state_legend(nodes, None),
        "fills": [
            _count_entry("node job-c0 job-p0 st-up sel",
                         f"job {job.pk}: filled, ringed" if not past else
                         f"job {job.pk} ran here: ringed",
                         sum(1 for n in nodes if n.selected), "legend-this-job"),
            _count_entry("node held st-up", "held by another job",
                         sum(1 for n in nodes if n.held and not n.selected), "legend-held"),
            _count_entry("node free st-up", "free",
                         sum(1 for n in nodes if not n.held and not n.selected),
                         "legend-free"),
        ],
        "roles": _role_legend([n for n in nodes if n.selected]),
        "jobs": [],
    }
    planes = sorted({s // shape.plane_size for s in mine})
    if shape.planes > 1 and planes:
        grid.caption = ("The job has nodes in plane" + ("s " if len(planes) > 1 else " ")
                        + "; ".join(shape.plane_label(p) for p in planes[:12])
                        + (" …" if len(planes) > 12 else "") + ".")
    return _finish(grid, nodes, request)


def candidate_grid(machine: Machine, primary: Iterable[str], spare: Iterable[str] = (), *,
                   excluded: Iterable[str] = (), request=None, plane: Any = None,
                   testid: str = "candidate-grid", compact: bool = False,
                   label: str = "candidate", own_job: int | None = None) -> SwitchGrid:
    """A proposed partition (primary and spare hostnames; ``excluded``: dropped ones,
    e.g. after keep-the-fastest) on the live occupancy. ``own_job``: the job the
    partition belongs to (its nodes are not "held by a job"). Every node is counted in
    exactly one legend entry: the partition's (candidate, spare or dropped), held by a
    job, or free."""
    shape = GridShape(tuple(machine.sides))
    primary, spare, excluded = set(primary), set(spare), set(excluded)
    raw = request.GET.get("plane") if request is not None and plane is None else plane
    plane = shape.clamp_plane(raw)
    nodes = _plane_nodes(machine, shape, plane)
    allocations = _active_allocations(machine, shape, plane)
    for node in nodes:
        held = allocations.get(node.id)
        if held is not None and held[0] != own_job:
            node.held, node.fill, node.note = True, "held", f"held by job {held[0]}"
        if node.hostname in primary or node.hostname in spare or node.hostname in excluded:
            node.role = (AllocationRole.SPARE if node.hostname in spare else
                         AllocationRole.EXCLUDED if node.hostname in excluded else "candidate")
            node.selected = node.role != AllocationRole.EXCLUDED
            node.fill = "job-c0 job-p0" if not node.held or excluded else node.fill
    grid = SwitchGrid(machine, shape, plane, _mode(machine, shape), testid=testid,
                      compact=compact)
    chosen = [n for n in nodes if n.selected]
    grid.legend = {
        "states": _state_legend(nodes, None),
        "fills": [
            _count_entry("node job-c0 job-p0 st-up sel", f"{label}: filled, ringed",
                         sum(1 for n in chosen if n.role != AllocationRole.SPARE),
                         "legend-candidate"),
            _count_entry("node held st-up", "held by a job" if own_job is None else
                         "held by another job",
                         sum(1 for n in nodes if n.held and not n.role), "legend-held"),
            _count_entry("node free st-up", "free", sum(1 for n in nodes if not n.held
                                                        and not n.role), "legend-free"),
        ],
        "roles": ([_count_entry("node job-c0 job-p0 st-up sel role-spare",
                                "spare: corner notch",
                                sum(1 for n in chosen if n.role == AllocationRole.SPARE),
                                "legend-spare")] if spare else [])
        + ([_count_entry("node job-c0 job-p0 st-up role-excluded",
                         "dropped: faded, hollow notch",
                         sum(1 for n in nodes if n.role == AllocationRole.EXCLUDED),
                         "legend-excluded")] if excluded else []),
        "jobs": [],
    }
    return _finish(grid, nodes, request)


SUSPICION_WORDS = (("ok", "no abnormal run"), ("watch", "some abnormal runs"),
                   ("suspect", "drain candidate"), ("nodata", "no data"))


def health_grid(machine: Machine, levels: dict[str, tuple[str, str]], *, request=None,
                plane: Any = None, href: Callable[[str], str] | None = None) -> SwitchGrid:
    """Fill = suspicion level (``levels``: hostname -> (level, tooltip)); border = state."""
    shape = GridShape(tuple(machine.sides))
    plane = shape.clamp_plane(plane)
    nodes = _plane_nodes(machine, shape, plane)
    for node in nodes:
        level, tip = levels.get(node.hostname, ("nodata", "no data"))
        node.fill, node.note = f"susp-{level}", tip
        if href is not None:
            node.href = href(node.hostname)
    grid = SwitchGrid(machine, shape, plane, _mode(machine, shape), testid="health-grid")
    per_level = Counter(n.fill for n in nodes)
    grid.legend = {
        "states": _state_legend(nodes, None),
        "fills": [_count_entry(f"node susp-{level} st-up", label, per_level[f"susp-{level}"],
                               f"legend-{level}") for level, label in SUSPICION_WORDS],
        "roles": [], "jobs": [],
    }
    return _finish(grid, nodes, request)
