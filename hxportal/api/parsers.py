"""A JSON parser that refuses bodies nested deeper than ``HX_MAX_JSON_DEPTH``.

Python's json module recurses, so a body of thousands of nested brackets would
otherwise end in a RecursionError (a 500). The depth is measured on the raw text
before decoding, outside strings, in one linear pass.
"""

from __future__ import annotations

import json
import math
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


def json_depth_exceeds(text: str, limit: int) -> bool:
    depth = 0
    in_string = False
    escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return True
        elif char in "]}":
            depth -= 1
    return False


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not allowed in JSON")


def _strict_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text} is out of range")
    return value


def request_text(stream, what: str = "Request body") -> str:
    """The body as text: UTF-8 or a 400 naming the problem (every parser's first step)."""
    raw = stream.read() if stream is not None else b""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(f"{what} is not valid UTF-8.") from exc


def load_json(text: str, **options) -> Any:
    """JSON within the nesting limit, else a 400; ``options`` go to :func:`json.loads`."""
    limit = settings.HX_MAX_JSON_DEPTH
    if json_depth_exceeds(text, limit):
        raise ParseError(f"JSON nested deeper than {limit} levels.")
    try:
        return json.loads(text, **options)
    except ValueError as exc:
        raise ParseError(f"JSON parse error - {exc}") from exc


class SafeJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        return load_json(request_text(stream), parse_constant=_reject_constant,
                         parse_float=_strict_float)
