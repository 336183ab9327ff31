"""Slurm-style hostlists through ClusterShell's NodeSet, with size limits.

Every field, filter, CSV cell and page that shows a set of nodes goes through
here, so all of them accept and emit the same compressed form (``hx[001-512]``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ClusterShell.NodeSet import NodeSet, NodeSetParseError, RangeSetParseError

MAX_HOSTLIST_CHARS = 100_000
MAX_HOSTLIST_NODES = 1_048_576


class HostlistError(ValueError):
    """A hostlist that cannot be parsed or is too large."""


_GROUP = re.compile(r"\[([^\[\]]*)\]")
_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*(?:/\s*(\d+))?)?\s*$")


def _split_top_level(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def estimated_size(text: str) -> int:
    """An upper bound on the node count, computed without expanding anything.

    ClusterShell expands ranges eagerly, so ``n[0-99999999]`` would take minutes;
    this bound lets :func:`expand` refuse it at once.

    >>> estimated_size("hx[001-512],login[1-2]")
    514
    """
    total = 0
    for part in _split_top_level(text):
        size = 1
        for group in _GROUP.findall(part):
            group_size = 0
            for item in group.split(","):
                match = _RANGE.match(item)
                if match is None:
                    return 0  # malformed: let NodeSet report it
                low, high, step = match.groups()
                if high is not None:
                    group_size += max(int(high) - int(low), 0) // int(step or 1) + 1
                else:
                    group_size += 1
            size *= group_size
        total += size
    return total


def expand(expression: str, max_nodes: int = MAX_HOSTLIST_NODES) -> list[str]:
    """Expand a hostlist in NodeSet order, refusing enormous or malformed input.

    >>> expand("hx[001-003],login1")
    ['hx001', 'hx002', 'hx003', 'login1']
    """
    if not isinstance(expression, str):
        raise HostlistError("hostlist must be a string")
    text = expression.strip()
    if not text:
        return []
    if len(text) > MAX_HOSTLIST_CHARS:
        raise HostlistError(f"hostlist longer than {MAX_HOSTLIST_CHARS} characters")
    if any(ch in text for ch in "{}$`;|&<>\\\n\r\t "):
        raise HostlistError("hostlist contains characters that are not allowed (e.g. braces)")
    bound = estimated_size(text)
    if bound > max_nodes:
        raise HostlistError(f"hostlist names {bound} nodes, more than the limit of {max_nodes}")
    try:
        nodeset = NodeSet(text)
        size = len(nodeset)
    except (NodeSetParseError, RangeSetParseError, ValueError, TypeError) as exc:
        raise HostlistError(f"malformed hostlist: {exc}") from exc
    if size > max_nodes:
        raise HostlistError(f"hostlist names {size} nodes, more than the limit of {max_nodes}")
    return list(nodeset)


def compress(hostnames: Iterable[str]) -> str:
    """Fold hostnames into the shortest hostlist.

    >>> compress(["hx003", "hx001", "hx002"])
    'hx[001-003]'
    """
    names = list(hostnames)
    if not names:
        return ""
    folded = _fold_simple(names)
    return folded if folded is not None else str(NodeSet.fromlist(names))


_SIMPLE_NAME = re.compile(r"([A-Za-z_-]+)(\d+)")


def _fold_simple(names: list[str]) -> str | None:
    """NodeSet's folding of names that are letters + one number (``hx001``), from
    integer runs instead of a parse of every name (65,536 names: about 20x
    faster). None when a name has another shape, or one prefix mixes widths with
    zero padding; NodeSet then folds the names itself. The output is NodeSet's
    own form (patterns sorted, one name without brackets), which a property test
    checks against ``NodeSet.fromlist``."""
    numbers: dict[str, list[str]] = {}
    for name in names:
        match = _SIMPLE_NAME.fullmatch(name)
        if match is None:
            return None
        numbers.setdefault(match.group(1), []).append(match.group(2))
    parts = []
    for prefix, digits in sorted(numbers.items(), key=lambda item: item[0] + "%s"):
        padded = any(len(d) > 1 and d[0] == "0" for d in digits)
        width = len(digits[0])
        if padded and any(len(d) != width for d in digits):
            return None
        values = sorted({int(d) for d in digits})
        runs, start, previous = [], values[0], values[0]
        for value in values[1:]:
            if value != previous + 1:
                runs.append((start, previous))
                start = value
            previous = value
        runs.append((start, previous))
        pad = width if padded else 0
        ranges = ",".join(f"{a:0{pad}d}" if a == b else f"{a:0{pad}d}-{b:0{pad}d}"
                          for a, b in runs)
        parts.append(prefix + (ranges if len(values) == 1 else f"[{ranges}]"))
    return ",".join(parts)
