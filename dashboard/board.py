"""The operations board: what the overview adds to each machine card, in a fixed
number of queries whatever the number of machines.

Per machine: a thumbnail of the switch grid (one cell per switch: share held, worst
state), busy and waiting nodes over a chosen range binned from the job history
(:mod:`allocation.usage`, pure), drains grouped by reason, the estimate's trend and
the age of the Slurm sync. Read-side only.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import Count, Q
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from allocation.models import Machine, Node, NodeState, SlurmLink
from allocation.services import history
from allocation.usage import RANGES, UsageSeries, range_bins, usage_series
from dashboard import charts as board_charts
from health.models import Estimate
from hxportal import hostlists
from hxportal.text import pluralize

#: The range a board opens on, and the names the picker offers (in order).
DEFAULT_RANGE = "week"
RANGE_LABELS = {"day": "last day", "week": "last week", "month": "last month"}
#: Switch cells of a thumbnail (planes beyond it are left out, and said so).
MAX_THUMB_SWITCHES = 1024
#: How many drain reasons a card lists (the count of drained nodes is always whole).
REASONS_SHOWN = 6


def pick_range(raw: str | None) -> str:
    """The range asked for in the query string, or the default."""
    return raw if raw in RANGES else DEFAULT_RANGE


@dataclass
class Drain:
    state: str
    reason: str
    hostlist: str
    count: int
    since: datetime | None


@dataclass
class Board:
    """The board's part of one machine card."""

    machine: Machine
    range: str
    thumbnail: SafeString | str = ""
    thumb_note: str = ""
    usage: UsageSeries | None = None
    usage_chart: dict | None = None
    jobs_in_range: int = 0
    synthetic: int = 0
    drains: list[Drain] = field(default_factory=list)
    more_drains: int = 0
    estimate_chart: dict | None = None
    alpha_chart: dict | None = None
    trend: str = ""
    slurm: dict | None = None

    @property
    def mean_busy_percent(self) -> int:
        total = self.machine.node_count or 1
        return round(100 * self.usage.mean_busy() / total) if self.usage else 0

    @property
    def peak_waiting_jobs(self) -> int:
        return math.ceil(self.usage.peak_waiting_jobs()) if self.usage else 0


def _thumbnails(machines: list[Machine]) -> dict[int, tuple[str, str]]:
    """(cells html, note) per machine, from one aggregate over every node."""
    held = Count("allocations", filter=Q(allocations__released_at__isnull=True))
    per: dict[int, dict[int, dict]] = defaultdict(lambda: defaultdict(
        lambda: {"n": 0, "held": 0, "drained": 0, "down": 0}))
    rows = (Node.objects.filter(machine_id__in=[m.pk for m in machines],
                                switch__lt=MAX_THUMB_SWITCHES)
            .order_by().values("machine_id", "switch", "state").annotate(n=Count("id"), held=held))
    for row in rows:
        cell = per[row["machine_id"]][row["switch"]]
        cell["n"] += row["n"]
        cell["held"] += row["held"]
        if row["state"] in (NodeState.DRAINED, NodeState.DOWN):
            cell[row["state"]] += row["n"]
    out = {}
    for machine in machines:
        out[machine.pk] = _thumbnail(machine, per.get(machine.pk, {}))
    return out


def _thumbnail(machine: Machine, cells: dict[int, dict]) -> tuple[str, str]:
    sides = list(machine.sides)
    cols = sides[-1]
    rows = math.prod(sides[:-1]) if len(sides) > 1 else 1
    switches = min(rows * cols, MAX_THUMB_SWITCHES)
    url = reverse("allocation:machine_detail", args=[machine.name])
    html = []
    for s in range(switches):
        c = cells.get(s, {"n": 0, "held": 0, "drained": 0, "down": 0})
        occ = math.ceil(4 * c["held"] / c["n"]) if c["n"] else 0
        worst = "down" if c["down"] else "drained" if c["drained"] else "up"
        title = (f"switch {s}: {c['held']} of {pluralize(c['n'], 'node')} held"
                 + (f", {c['drained']} drained" if c["drained"] else "")
                 + (f", {c['down']} down" if c["down"] else ""))
        html.append(f'<span class="switch summary occ-{occ} st-{worst}" data-switch="{s}" '
                    f'data-held="{c["held"]}" data-state="{worst}" title="{escape(title)}"></span>')
    shown_rows = math.ceil(switches / cols)
    note = "" if switches == rows * cols else \
        f"first {switches:,} of {rows * cols:,} switches"
    body = "".join(html)
    grid = (f'<a class="thumb" href="{escape(url)}" data-testid="thumb-{escape(machine.name)}" '
            f'data-cols="{cols}" data-rows="{shown_rows}" aria-label="switch grid of '
            f'{escape(machine.name)}: open it">{body}</a>')
    return mark_safe(grid), note  # noqa: S308  # nosec B308 B703 - values escaped above


def _drains(ids: list[int]) -> dict[int, list[Drain]]:
    """Drained and down nodes per machine, grouped by state and reason (one query)."""
    groups: dict[tuple[int, str, str], list[tuple[str, datetime | None]]] = defaultdict(list)
    for machine_id, state, reason, host, when in (
            Node.objects.filter(machine_id__in=ids).exclude(state=NodeState.UP)
            .order_by("machine_id", "index")
            .values_list("machine_id", "state", "state_reason", "hostname", "state_changed_at")):
        groups[(machine_id, state, reason)].append((host, when))
    out: dict[int, list[Drain]] = defaultdict(list)
    for (machine_id, state, reason), items in groups.items():
        times = [w for _, w in items if w is not None]
        out[machine_id].append(Drain(state=state, reason=reason or "no reason given",
                                     hostlist=hostlists.compress(h for h, _ in items),
                                     count=len(items), since=min(times) if times else None))
    for drains in out.values():
        drains.sort(key=lambda d: (-d.count, d.state, d.reason))
    return out


def _estimates(ids: list[int], since: datetime) -> dict[int, list[Estimate]]:
    out: dict[int, list[Estimate]] = defaultdict(list)
    for e in (Estimate.objects.filter(machine_id__in=ids, created_at__gte=since)
              .only("id", "machine_id", "benchmark", "p_abn", "p_abn_low", "p_abn_high",
                    "alpha_abn", "created_at").order_by("created_at", "id")):
        out[e.machine_id].append(e)
    return out


def _change(name: str, old: float | None, new: float | None) -> str:
    if old is None or new is None:
        return ""
    if f"{new:.3g}" == f"{old:.3g}":
        return f"{name} unchanged ({new:.3g})"
    return f"{name} {'up' if new > old else 'down'} from {old:.3g} to {new:.3g}"


def _trend(items: list[Estimate]) -> str:
    """The newest p_abn and alpha_abn against the estimate before, in words.

    >>> class E:
    ...     def __init__(self, p, a): self.p_abn, self.alpha_abn = p, a
    >>> _trend([E(0.02, 1.3), E(0.01, 1.3)])
    'p_abn down from 0.02 to 0.01, alpha_abn unchanged (1.3) since the previous estimate'
    """
    if len(items) < 2:
        return "one estimate in this range" if items else ""
    old, new = items[-2], items[-1]
    parts = [_change("p_abn", old.p_abn, new.p_abn),
             _change("alpha_abn", old.alpha_abn, new.alpha_abn)]
    return ", ".join(p for p in parts if p) + " since the previous estimate"


def age_text(seconds: int) -> str:
    """A sync's age in whole units.

    >>> age_text(42), age_text(125), age_text(7300), age_text(200_000)
    ('42 s', '2 min', '2 h', '2 d')
    """
    for unit, size, from_ in (("d", 86_400, 172_800), ("h", 3_600, 7_200), ("min", 60, 120)):
        if seconds >= from_:
            return f"{seconds // size} {unit}"
    return f"{seconds} s"


def _slurm(ids: list[int], now: datetime) -> dict[int, dict]:
    out = {}
    for link in SlurmLink.objects.filter(machine_id__in=ids):
        age = round((now - link.last_success_at).total_seconds()) \
            if link.last_success_at else None
        late = age is None or age > 3 * link.interval_seconds or link.consecutive_failures > 0
        out[link.machine_id] = {"enabled": link.enabled, "age_seconds": age,
                                "age": age_text(age) if age is not None else "",
                                "last_error": link.last_error, "late": late,
                                "failures": link.consecutive_failures,
                                "interval": link.interval_seconds}
    return out


def boards(machines: list[Machine], range_name: str, now: datetime | None = None
           ) -> dict[int, Board]:
    """The board of each machine (six queries in all)."""
    now = now or timezone.now()
    ids = [m.pk for m in machines]
    if not ids:
        return {}
    length, _ = RANGES[range_name]
    since = now - timedelta(seconds=length)
    edges = range_bins(range_name, now.timestamp())
    # Occupancy over time is everyone's business, as the grid's is: every job counts
    # (HX_PRIVATE_DATA hides whose jobs they are, and the series name none).
    spans = history.spans(ids, datetime.fromtimestamp(edges[0], tz=now.tzinfo))
    thumbs = _thumbnails(machines)
    drains = _drains(ids)
    estimates = _estimates(ids, since)
    slurm = _slurm(ids, now)
    out = {}
    for m in machines:
        items, synthetic = spans.get(m.pk, ([], 0))
        series = usage_series(items, edges, now.timestamp())
        listed = drains.get(m.pk, [])
        board = Board(machine=m, range=range_name, usage=series, jobs_in_range=len(items),
                      synthetic=synthetic, drains=listed[:REASONS_SHOWN],
                      more_drains=max(len(listed) - REASONS_SHOWN, 0), slurm=slurm.get(m.pk))
        board.thumbnail, board.thumb_note = thumbs[m.pk]
        if items:
            board.usage_chart = board_charts.usage_chart(
                m, series, range_name, RANGE_LABELS[range_name], synthetic)
        mine = estimates.get(m.pk, [])
        same = [e for e in mine if e.benchmark == mine[-1].benchmark] if mine else []
        board.estimate_chart = board_charts.estimate_chart(
            m, same, range_name, RANGE_LABELS[range_name], (edges[0], edges[-1]))
        board.alpha_chart = board_charts.alpha_chart(
            m, same, range_name, RANGE_LABELS[range_name], (edges[0], edges[-1]))
        board.trend = _trend(same)
        out[m.pk] = board
    return out

