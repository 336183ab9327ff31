"""Words for counts: the one place Python code makes a noun agree with its number.

Templates use Django's ``pluralize`` filter or ``count_of`` (which calls this).
"""

from __future__ import annotations

__all__ = ["join_words", "plural", "pluralize"]

_IRREGULAR = {"is": "are", "was": "were", "has": "have"}


def plural(noun: str) -> str:
    """The plural of an English noun phrase (its last word), for the nouns the portal
    counts.

    >>> plural("node"), plural("switch"), plural("whole switch"), plural("is")
    ('nodes', 'switches', 'whole switches', 'are')
    >>> plural("policy"), plural("day"), plural("key")
    ('policies', 'days', 'keys')
    """
    head, _, last = noun.rpartition(" ")
    if last in _IRREGULAR:
        word = _IRREGULAR[last]
    elif last.endswith(("s", "sh", "ch", "x")):
        word = last + "es"
    elif len(last) > 1 and last.endswith("y") and last[-2] not in "aeiou":
        word = last[:-1] + "ies"
    else:
        word = last + "s"
    return f"{head} {word}" if head else word


def pluralize(count: int | float, noun: str, plural_form: str | None = None) -> str:
    """``count`` and the noun agreeing with it, with thousands separators.

    >>> pluralize(1, "node"), pluralize(0, "node"), pluralize(1602, "run")
    ('1 node', '0 nodes', '1,602 runs')
    >>> pluralize(2, "primary node"), pluralize(1, "seed"), pluralize(3, "person", "people")
    ('2 primary nodes', '1 seed', '3 people')
    """
    word = noun if count == 1 else (plural_form or plural(noun))
    number = f"{count:,}" if isinstance(count, int) else f"{count:,g}"
    return f"{number} {word}"


def join_words(words: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``.

    >>> join_words(["row"]), join_words(["row", "diagonal"]), join_words(["a", "b", "c"])
    ('row', 'row and diagonal', 'a, b and c')
    """
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"
