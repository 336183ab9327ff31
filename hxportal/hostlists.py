"""Slurm-style hostlists through ClusterShell's NodeSet, with a strict grammar.

Every field, filter, CSV cell and page that shows a set of nodes goes through
here, so all of them accept and emit the same compressed form (``hx[001-512]``).

Input is checked against the grammar below *before* ClusterShell sees it, and
ClusterShell never resolves node groups: its ``@group`` syntax runs the shell
command of ``groups.conf`` (GNU sed's ``e`` flag then runs anything), and its set
operators (``!``, ``&``, ``^``) are nothing operators need here::

    hostlist := pattern ("," pattern)*
    pattern  := (namechar | "[" range ("," range)* "]")+     at most 4 brackets
    range    := number ("-" number ("/" step)?)?              1 to 9 digits each
    namechar := A-Z a-z 0-9 . _ -

The size follows from the grammar before anything is expanded, so every caller
caps a list by its machine's node count at no cost. Error messages are our own
words and quote at most one character of the input, never a library's text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ClusterShell.NodeSet import (
    RESOLVER_NOGROUP,
    NodeSet,
    NodeSetException,
    set_std_group_resolver,
)
from ClusterShell.NodeUtils import GroupResolver
from ClusterShell.RangeSet import RangeSetException

MAX_HOSTLIST_CHARS = 100_000
MAX_HOSTLIST_NODES = 1_048_576
MAX_NUMBER_DIGITS = 9
MAX_BRACKETS_PER_PATTERN = 4
NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")

# Any NodeSet made without an explicit resolver (here or in a library) resolves
# groups through this one, which has no sources: a group name is an error, never
# a command.
set_std_group_resolver(GroupResolver())


class HostlistError(ValueError):
    """A hostlist that breaks the grammar or names too many nodes."""


def _char_name(char: str) -> str:
    return repr(char) if char.isprintable() else f"U+{ord(char):04X}"


def _refusal(char: str, position: int) -> HostlistError:
    if char == "@":
        why = "node groups (@name) are not supported; list the nodes"
    elif char in "!&^":
        why = "set operators (! & ^) are not supported; list the nodes"
    else:
        why = "only letters, digits, '.', '_', '-', ',' and [ranges] are allowed"
    return HostlistError(f"character {_char_name(char)} at position {position + 1}: {why}")


@dataclass
class _Parser:
    """A single left-to-right pass over the text: linear time, no backtracking."""

    text: str
    pos: int = 0

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def number(self) -> int:
        start = self.pos
        while self.peek().isascii() and self.peek().isdigit():
            self.pos += 1
        digits = self.pos - start
        if digits == 0:
            found = self.peek()
            raise HostlistError(f"a number is expected at position {self.pos + 1}" + (
                f", found {_char_name(found)}" if found else " (the hostlist ends)"))
        if digits > MAX_NUMBER_DIGITS:
            raise HostlistError(f"the number at position {start + 1} has more than "
                                f"{MAX_NUMBER_DIGITS} digits")
        return int(self.text[start:self.pos])

    def range_size(self) -> int:
        start = self.pos
        low = self.number()
        if self.peek() != "-":
            return 1
        self.pos += 1
        high = self.number()
        step = 1
        if self.peek() == "/":
            self.pos += 1
            step = self.number()
            if step == 0:
                raise HostlistError(f"the range at position {start + 1} has a step of 0")
        if high < low:
            raise HostlistError(f"the range at position {start + 1} goes backwards "
                                f"({low}-{high})")
        return (high - low) // step + 1

    def bracket_size(self) -> int:
        self.pos += 1  # "["
        size = self.range_size()
        while self.peek() == ",":
            self.pos += 1
            size += self.range_size()
        if self.peek() != "]":
            found = self.peek()
            raise HostlistError(f"']' is expected at position {self.pos + 1}" + (
                f", found {_char_name(found)}" if found else " (the hostlist ends)"))
        self.pos += 1
        return size

    def pattern_size(self) -> int:
        start, size, brackets = self.pos, 1, 0
        while (char := self.peek()) not in ("", ","):
            if char in NAME_CHARS:
                self.pos += 1
            elif char == "[":
                brackets += 1
                if brackets > MAX_BRACKETS_PER_PATTERN:
                    raise HostlistError(f"more than {MAX_BRACKETS_PER_PATTERN} [ranges] in "
                                        f"the name at position {start + 1}")
                size *= self.bracket_size()
            else:
                raise _refusal(char, self.pos)
        if self.pos == start:
            raise HostlistError(f"an empty name at position {start + 1}")
        return size

    def total_size(self, max_nodes: int) -> int:
        total = self.pattern_size()
        while total <= max_nodes and self.peek() == ",":
            self.pos += 1
            total += self.pattern_size()
        return total


def _checked(expression: object) -> str:
    if not isinstance(expression, str):
        raise HostlistError("a hostlist must be a string")
    text = expression.strip()
    if len(text) > MAX_HOSTLIST_CHARS:
        raise HostlistError(f"the hostlist is longer than {MAX_HOSTLIST_CHARS} characters")
    return text


def size(expression: str, max_nodes: int = MAX_HOSTLIST_NODES) -> int:
    """How many names the hostlist spells (duplicates counted), without expanding
    it; checks the grammar. Stops counting once past ``max_nodes``.

    >>> size("hx[001-512],login[1-2]")
    514
    >>> size("n[0-10/5]")
    3
    """
    text = _checked(expression)
    return _Parser(text).total_size(max_nodes) if text else 0


def expand(expression: str, max_nodes: int = MAX_HOSTLIST_NODES) -> list[str]:
    """Expand a hostlist in NodeSet order, refusing anything outside the grammar and
    lists of more than ``max_nodes`` names (callers pass their machine's node count).

    >>> expand("hx[001-003],login1")
    ['hx001', 'hx002', 'hx003', 'login1']
    >>> expand("@adm")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hxportal.hostlists.HostlistError: character '@' at position 1: node groups ...
    """
    text = _checked(expression)
    if not text:
        return []
    bound = _Parser(text).total_size(max_nodes)
    if bound > max_nodes:
        raise HostlistError(f"the hostlist names more than {max_nodes} nodes, "
                            f"the most this field accepts")
    try:
        return list(NodeSet(text, resolver=RESOLVER_NOGROUP))
    except (NodeSetException, RangeSetException, ValueError, TypeError) as exc:
        # The grammar admits only what NodeSet folds; say so without its text.
        raise HostlistError("the hostlist is malformed (check the padding of its "
                            "ranges)") from exc


def compress(hostnames: Iterable[str]) -> str:
    """Fold hostnames into the shortest hostlist.

    >>> compress(["hx003", "hx001", "hx002"])
    'hx[001-003]'
    """
    names = list(hostnames)
    if not names:
        return ""
    folded = _fold_simple(names)
    return folded if folded is not None else fold_with_nodeset(names)


def fold_with_nodeset(names: list[str]) -> str:
    """NodeSet's own folding, never resolving groups (names may come from uploads)."""
    return str(NodeSet.fromlist(names, resolver=RESOLVER_NOGROUP))


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
