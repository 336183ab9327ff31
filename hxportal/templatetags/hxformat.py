"""Numbers and times for people: significant figures, thousands separators, units, ages.

The functions are plain Python (views use them in sentences) and template
filters (``{% load hxformat %}``). Every filter prints an em dash for a missing
value (None or ""), so a table never shows ``None`` or a misleading ``0.0``.

>>> sig(0.020833333333333332), sig(2.499e+05), sig(3.5333), sig(1.2e-7), sig(1.0)
('0.0208', '249,900', '3.53', '1.20 × 10⁻⁷', '1.00')
>>> thousands(212258.4), seconds(5400), node_seconds(212258)
('212,258', '1.50 h', '212,258 node-s (59 node-h)')
>>> percent(0.2083), ratio(1.2345), change(0.998, 1.0), change(0.95, 1.0), change(1.2, 1.0)
('20.8 %', '1.23×', 'same as', '5.0 % lower than', '20 % higher than')
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from numbers import Real

from django import template
from django.utils import timezone
from django.utils.html import escape
from django.utils.safestring import mark_safe

from hxportal import text

register = template.Library()

MISSING = "—"
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
#: Changes smaller than this fraction read "same as" (0.5 %).
SAME_WITHIN = 0.005


def _number(value) -> float | None:
    """A finite float, or None for missing, non-numeric, NaN or infinite values."""
    if value is None or value == "" or isinstance(value, bool):
        return None
    if not isinstance(value, Real):
        try:
            value = float(value)
        except (TypeError, ValueError):
            return None
    value = float(value)
    return value if math.isfinite(value) else None


@register.filter
def sig(value, digits: int = 3) -> str:
    """``digits`` significant figures (trailing zeros kept: ``1.00``), never dropping
    integer digits (``249,900``); thousands separated; scientific (``1.20 × 10⁻⁷``)
    only for very small or huge magnitudes."""
    x = _number(value)
    if x is None:
        return MISSING if value in (None, "") else str(value)
    digits = max(int(digits), 1)
    if x == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(x)))
    if magnitude < -4 or magnitude >= 15:
        mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
        return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"
    decimals = max(digits - 1 - magnitude, 0)
    text = f"{x:,.{decimals}f}"
    # Rounding can carry into a new digit (9.996 -> 10.00): keep ``digits`` figures.
    figures = "".join(ch for ch in text if ch.isdigit()).lstrip("0")
    if decimals and len(figures) > digits:
        text = f"{x:,.{decimals - 1}f}"
    return text


@register.filter
def short(value, digits: int = 3) -> str:
    """:func:`sig` without trailing zeros, for chart ticks: ``60``, ``0.5``, ``1.25``."""
    text = sig(value, digits)
    if "." in text and "×" not in text:
        text = text.rstrip("0").rstrip(".")
    return text


@register.filter
def thousands(value, decimals: int = 0) -> str:
    """``212258.4`` -> ``212,258``; with ``decimals``, that many after the point."""
    x = _number(value)
    if x is None:
        return MISSING if value in (None, "") else str(value)
    return f"{x:,.{max(int(decimals), 0)}f}"


@register.filter
def percent(fraction, digits: int = 3) -> str:
    """A fraction as a percentage: ``0.2083`` -> ``20.8 %``."""
    x = _number(fraction)
    if x is None:
        return MISSING
    return f"{sig(x * 100, digits)} %"


@register.filter
def ratio(value, digits: int = 3) -> str:
    """A multiplicative factor: ``1.2345`` -> ``1.23×``."""
    x = _number(value)
    return MISSING if x is None else f"{sig(x, digits)}×"


@register.filter
def seconds(value) -> str:
    """A duration in the largest sensible unit: ``0.0167 s``, ``42 s``, ``3.5 min``, ``1.5 h``."""
    x = _number(value)
    if x is None:
        return MISSING
    # (unit, its length in seconds, the smallest magnitude written in it)
    for unit, size, from_ in (("d", 86400, 86400), ("h", 3600, 3600), ("min", 60, 120)):
        if abs(x) >= from_:
            return f"{sig(x / size)} {unit}"
    return f"{sig(x)} s"


@register.filter
def node_seconds(value) -> str:
    """Node-time with its unit, and node-hours when that helps: ``212,258 node-s (59 node-h)``."""
    x = _number(value)
    if x is None:
        return MISSING
    text = f"{thousands(x) if abs(x) >= 100 else sig(x)} node-s"
    if abs(x) >= 3600:
        text += f" ({sig(x / 3600, 2)} node-h)"
    return text


def change(value, reference) -> str:
    """How ``value`` compares with ``reference``: "same as" within 0.5 %, else
    "N % lower than" / "N % higher than"."""
    x, ref = _number(value), _number(reference)
    if x is None or not ref:
        return ""
    delta = x / ref - 1
    if abs(delta) <= SAME_WITHIN:
        return "same as"
    pct = round(abs(delta) * 100, 1)
    amount = f"{pct:.1f}" if pct < 10 else f"{pct:,.0f}"
    return f"{amount} % {'lower' if delta < 0 else 'higher'} than"


@register.simple_tag
def compared(value, reference) -> str:
    """``{% compared cost default_cost %}`` -> ``12 % lower than``."""
    return change(value, reference)


@register.filter
def ago(moment, now: datetime | None = None) -> str:
    """Age of a timestamp: ``just now``, ``5 min ago``, ``3 h ago``, ``2 d ago``."""
    if not isinstance(moment, datetime):
        return MISSING
    age = (now or timezone.now()) - moment
    if age < timedelta(0):
        return "in the future"
    secs = age.total_seconds()
    if secs < 60:
        return "just now"
    if secs < 3600:
        return f"{int(secs // 60)} min ago"
    if secs < 2 * 86400:
        return f"{int(secs // 3600)} h ago"
    if secs < 60 * 86400:
        return f"{int(secs // 86400)} d ago"
    return f"on {moment:%Y-%m-%d}"


@register.filter
def break_underscores(value) -> str:
    """A code name that may wrap after its underscores (``least_<wbr>loaded_<wbr>...``),
    so a narrow table column breaks it between words.

    >>> str(break_underscores("least_loaded_diagonal"))
    'least_<wbr>loaded_<wbr>diagonal'
    """
    return mark_safe(escape(str(value)).replace("_", "_<wbr>"))  # noqa: S308  # nosec B308 B703 - escaped first


@register.filter
def byte_size(value) -> str:
    """``16777216|byte_size`` -> ``16 MiB``; ``2500|byte_size`` -> ``2.44 KiB``.

    >>> byte_size(16 * 1024 * 1024), byte_size(2500), byte_size(512)
    ('16 MiB', '2.44 KiB', '512 bytes')
    """
    n = _number(value)
    if n is None:
        return MISSING
    for unit, size in (("GiB", 1024 ** 3), ("MiB", 1024 ** 2), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return text.pluralize(int(n), "byte")


@register.filter
def count_of(value, noun: str) -> str:
    """``3|count_of:"node"`` -> ``3 nodes``; ``1|count_of:"switch"`` -> ``1 switch``."""
    n = _number(value)
    if n is None:
        return MISSING
    return f"{thousands(n)} {noun if n == 1 else text.plural(noun)}"
