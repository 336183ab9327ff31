"""Inline SVG charts for the health and spares pages, drawn on the server.

The CSP forbids inline scripts and style attributes, so charts are plain SVG
with presentation attributes and CSS classes (``static/hxportal/app.css``);
every text is escaped. Each function returns markup safe to put in a template.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from hxportal.templatetags.hxformat import short

WIDTH, HEIGHT = 640, 260
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 16, 40


def _fmt(value: float) -> str:
    """Tick and label numbers: three significant figures, thousands separated
    (``250,000`` rather than ``2.50e+05``), no trailing zeros (``60``, ``0.5``)."""
    return short(value, 3)


@dataclass
class Series:
    """One line of a chart; ``css`` picks its colour in app.css."""

    name: str
    xs: Sequence[float]
    ys: Sequence[float]
    css: str = "s1"
    markers: bool = False
    highlight: Sequence[bool] = field(default_factory=list)


@dataclass
class Mark:
    """A labelled point (e.g. the optimum)."""

    x: float
    y: float
    label: str
    css: str = "optimum"


class _Frame:
    def __init__(self, xs: Sequence[float], ys: Sequence[float], *, y_zero: bool,
                 pad: bool = True) -> None:
        self.x0, self.x1 = min(xs), max(xs)
        if self.x1 == self.x0:
            self.x1 = self.x0 + 1
        lo, hi = min(ys), max(ys)
        if y_zero:
            lo = min(lo, 0.0)
        if hi == lo:
            hi = lo + (abs(lo) or 1.0)
        margin = (hi - lo) * 0.05 if pad else 0.0
        self.y0, self.y1 = (lo if y_zero and lo == 0 else lo - margin), hi + margin

    def x(self, value: float) -> float:
        return LEFT + (value - self.x0) / (self.x1 - self.x0) * (WIDTH - LEFT - RIGHT)

    def y(self, value: float) -> float:
        return HEIGHT - BOTTOM - (value - self.y0) / (self.y1 - self.y0) * (HEIGHT - TOP - BOTTOM)


def _axes(frame: _Frame, x_label: str, y_label: str, x_ticks: Sequence[tuple[float, str]] = ()
          ) -> list[str]:
    parts = [
        f'<line class="axis" x1="{LEFT}" y1="{HEIGHT - BOTTOM}" x2="{WIDTH - RIGHT}" '
        f'y2="{HEIGHT - BOTTOM}"/>',
        f'<line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{HEIGHT - BOTTOM}"/>',
    ]
    for i in range(5):
        value = frame.y0 + (frame.y1 - frame.y0) * i / 4
        y = frame.y(value)
        parts.append(f'<line class="gridline" x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" '
                     f'y2="{y:.1f}"/>')
        parts.append(f'<text class="tick" x="{LEFT - 4}" y="{y + 4:.1f}" '
                     f'text-anchor="end">{escape(_fmt(value))}</text>')
    ticks = x_ticks or [(frame.x0 + (frame.x1 - frame.x0) * i / 4, "") for i in range(5)]
    for i, (value, label) in enumerate(ticks):
        x = frame.x(value)
        text = label or _fmt(value)
        anchor = ("start" if i == 0 and len(ticks) > 1 else
                  "end" if i == len(ticks) - 1 and len(ticks) > 1 else "middle")
        parts.append(f'<text class="tick" x="{x:.1f}" y="{HEIGHT - BOTTOM + 14}" '
                     f'text-anchor="{anchor}">{escape(text)}</text>')
    parts.append(f'<text class="label" x="{(LEFT + WIDTH - RIGHT) / 2:.0f}" '
                 f'y="{HEIGHT - 6}" text-anchor="middle">{escape(x_label)}</text>')
    parts.append(f'<text class="label" x="12" y="{(TOP + HEIGHT - BOTTOM) / 2:.0f}" '
                 f'text-anchor="middle" transform="rotate(-90 12 '
                 f'{(TOP + HEIGHT - BOTTOM) / 2:.0f})">{escape(y_label)}</text>')
    return parts


def _svg(parts: list[str], title: str, testid: str) -> SafeString:
    body = "".join(parts)
    return mark_safe(  # noqa: S308 - every dynamic text above went through escape()  # nosec B308 B703 - every dynamic text is escaped
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'data-testid="{escape(testid)}" aria-label="{escape(title)}">'
        f"<title>{escape(title)}</title>{body}</svg>")


def line_chart(series: Sequence[Series], *, title: str, testid: str, x_label: str,
               y_label: str, hlines: Sequence[tuple[float, str]] = (),
               band: tuple[Sequence[float], Sequence[float], Sequence[float]] | None = None,
               marks: Sequence[Mark] = (), x_ticks: Sequence[tuple[float, str]] = (),
               y_zero: bool = False) -> SafeString:
    """Lines against a shared x axis, with optional band, horizontal lines and marks."""
    xs = [x for s in series for x in s.xs]
    ys = [y for s in series for y in s.ys] + [v for v, _ in hlines]
    if band is not None:
        ys += list(band[1]) + list(band[2])
    if not xs:
        return mark_safe("")  # nosec B308 B703 - every dynamic text is escaped
    frame = _Frame(xs, ys, y_zero=y_zero)
    parts = _axes(frame, x_label, y_label, x_ticks)
    if band is not None and band[0]:
        bx, lo, hi = band
        upper = " ".join(f"{frame.x(x):.1f},{frame.y(y):.1f}" for x, y in zip(bx, hi,
                                                                               strict=True))
        lower = " ".join(f"{frame.x(x):.1f},{frame.y(y):.1f}"
                         for x, y in zip(reversed(bx), reversed(lo), strict=True))
        parts.append(f'<polygon class="band" points="{upper} {lower}"/>')
    for value, label in hlines:
        y = frame.y(value)
        parts.append(f'<line class="hline" x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" '
                     f'y2="{y:.1f}"><title>{escape(label)}</title></line>')
        parts.append(f'<text class="hline-label" x="{WIDTH - RIGHT - 4}" y="{y - 4:.1f}" '
                     f'text-anchor="end">{escape(label)}</text>')
    for s in series:
        points = " ".join(f"{frame.x(x):.1f},{frame.y(y):.1f}" for x, y in zip(s.xs, s.ys,
                                                                               strict=True))
        parts.append(f'<polyline class="line {escape(s.css)}" points="{points}">'
                     f"<title>{escape(s.name)}</title></polyline>")
        if s.markers:
            flags = list(s.highlight) or [False] * len(s.xs)
            for x, y, hot in zip(s.xs, s.ys, flags, strict=True):
                parts.append(f'<circle class="dot {escape(s.css)}{" hot" if hot else ""}" '
                             f'cx="{frame.x(x):.1f}" cy="{frame.y(y):.1f}" r="3">'
                             f"<title>{escape(_fmt(y))}</title></circle>")
    for mark in marks:
        cx, cy = frame.x(mark.x), frame.y(mark.y)
        parts.append(f'<circle class="{escape(mark.css)}" cx="{cx:.1f}" cy="{cy:.1f}" r="5">'
                     f"<title>{escape(mark.label)}</title></circle>")
        anchor = "end" if cx > WIDTH * 0.7 else "start"
        dx = -8 if anchor == "end" else 8
        parts.append(f'<text class="mark-label" x="{cx + dx:.1f}" y="{cy - 8:.1f}" '
                     f'text-anchor="{anchor}">{escape(mark.label)}</text>')
    if len(series) > 1:
        for i, s in enumerate(series):
            x = LEFT + 10 + i * 150
            parts.append(f'<line class="line {escape(s.css)}" x1="{x}" y1="{TOP + 4}" '
                         f'x2="{x + 18}" y2="{TOP + 4}"/>')
            parts.append(f'<text class="legend-label" x="{x + 22}" y="{TOP + 8}">'
                         f"{escape(s.name)}</text>")
    return _svg(parts, title, testid)


def histogram(normal: Sequence[float], abnormal: Sequence[float], *, threshold: float | None,
              median: float | None, title: str, testid: str, bins: int = 30,
              x_label: str = "benchmark time (s)") -> SafeString:
    """Stacked histogram of normal and abnormal times on log-spaced bins, with thresholds."""
    values = list(normal) + list(abnormal)
    if not values:
        return mark_safe("")  # nosec B308 B703 - every dynamic text is escaped
    lo, hi = min(values), max(values)
    if threshold is not None:
        hi = max(hi, threshold * 1.02)
    if hi <= lo:
        hi = lo * 1.1
    log_lo, log_hi = math.log(lo), math.log(hi)
    width = (log_hi - log_lo) / bins

    def bin_of(v: float) -> int:
        return min(int((math.log(v) - log_lo) / width), bins - 1)

    counts_n, counts_a = [0] * bins, [0] * bins
    for v in normal:
        counts_n[bin_of(v)] += 1
    for v in abnormal:
        counts_a[bin_of(v)] += 1
    top = max(n + a for n, a in zip(counts_n, counts_a, strict=True))
    # A multiple of 4 puts the five y ticks on whole node counts.
    frame = _Frame([log_lo, log_hi], [0, 4 * math.ceil(top / 4)], y_zero=True, pad=False)
    ticks = [(log_lo + (log_hi - log_lo) * i / 4, _fmt(math.exp(log_lo + (log_hi - log_lo)
                                                             * i / 4))) for i in range(5)]
    parts = _axes(frame, x_label + " (log scale)", "nodes", ticks)
    for i in range(bins):
        x0, x1 = frame.x(log_lo + i * width), frame.x(log_lo + (i + 1) * width)
        base = frame.y(0)
        for count, css, below in ((counts_n[i], "bar-normal", 0), (counts_a[i], "bar-abnormal",
                                                                   counts_n[i])):
            if not count:
                continue
            y_top, y_bottom = frame.y(below + count), frame.y(below) if below else base
            low_edge, high_edge = math.exp(log_lo + i * width), math.exp(log_lo + (i + 1) * width)
            label = (f"{count} {'abnormal' if css == 'bar-abnormal' else 'normal'} "
                     f"node(s) in {_fmt(low_edge)}..{_fmt(high_edge)} s")
            parts.append(f'<rect class="{css}" x="{x0 + 0.5:.1f}" y="{y_top:.1f}" '
                         f'width="{max(x1 - x0 - 1, 1):.1f}" height="{y_bottom - y_top:.1f}">'
                         f"<title>{escape(label)}</title></rect>")
    for row, (value, css, label) in enumerate(((median, "median-line", "median"),
                                               (threshold, "threshold-line",
                                                "abnormal threshold"))):
        if value is None or value <= 0:
            continue
        x = frame.x(math.log(value))
        parts.append(f'<line class="{css}" x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" '
                     f'y2="{HEIGHT - BOTTOM}"><title>{escape(label)} {_fmt(value)} s</title>'
                     "</line>")
        parts.append(f'<text class="mark-label" x="{x + 4:.1f}" y="{TOP + 12 + 14 * row}">'
                     f"{escape(label)} {escape(_fmt(value))} s</text>")
    return _svg(parts, title, testid)
