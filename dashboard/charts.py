"""What the operations board draws per machine: usage, p_abn and alpha_abn over the
chosen range (chart specifications for ``static/hxportal/charts.js``, built on
:mod:`hxportal.charts`)."""

from __future__ import annotations

from allocation.models import Machine
from allocation.usage import UsageSeries
from health.models import Estimate
from hxportal import charts


def usage_chart(machine: Machine, series: UsageSeries, range_name: str, period: str,
                synthetic: int) -> dict:
    """Nodes busy and waiting over the range (``period``: its label), the machine's size drawn."""
    xs = series.centres
    label = " (synthetic history)" if synthetic else ""
    return charts.xy_chart(
        f"usage-{machine.name}", f"{machine.name}: nodes busy and waiting, "
                                 f"{period}{label}",
        charts.axis("time", "UTC", scale="time", bounds=(series.edges[0], series.edges[-1])),
        charts.axis("busy or waiting", "nodes", zero=True),
        [charts.line("busy", xs, series.busy_nodes),
         charts.line("waiting", xs, series.waiting_nodes, colour=3)],
        hlines=[(machine.node_count, f"{machine.node_count:,} nodes")],
        filename=f"{machine.name}-usage-{range_name}")


def estimate_chart(machine: Machine, items: list[Estimate], range_name: str, period: str,
                   bounds: tuple[float, float]) -> dict | None:
    """p_abn with its 95 % interval over the range (oldest first); None without estimates."""
    if not items:
        return None
    bench = items[-1].benchmark
    xs = [e.created_at.timestamp() for e in items]
    return charts.xy_chart(
        f"trend-{machine.name}", f"{machine.name}: p_abn ({bench}), {period}",
        charts.axis("estimated at", "UTC", scale="time", bounds=bounds),
        charts.axis("p_abn", "probability", zero=True),
        [charts.band("95 % interval", xs, [e.p_abn_low for e in items],
                     [e.p_abn_high for e in items]),
         charts.line("p_abn", xs, [e.p_abn for e in items], points=True)],
        filename=f"{machine.name}-p-abn-{range_name}")


def alpha_chart(machine: Machine, items: list[Estimate], range_name: str, period: str,
                bounds: tuple[float, float]) -> dict | None:
    """alpha_abn over the range, from 1 (no slowdown) up; None without a value."""
    shown = [e for e in items if e.alpha_abn is not None]
    if not shown:
        return None
    return charts.xy_chart(
        f"alpha-{machine.name}", f"{machine.name}: alpha_abn ({shown[-1].benchmark}), "
                                 f"{period}",
        charts.axis("estimated at", "UTC", scale="time", bounds=bounds),
        # From 1 (no slowdown) up: a change in the third digit stays a small one.
        charts.axis("alpha_abn", "×", bounds=(1.0, max(2.0, max(e.alpha_abn for e in shown)))),
        [charts.line("alpha_abn", [e.created_at.timestamp() for e in shown],
                     [e.alpha_abn for e in shown], colour=1, points=True)],
        filename=f"{machine.name}-alpha-{range_name}")
