"""Parsers of benchmark uploads: JSON that keeps NaN and Infinity, and CSV bodies."""

from __future__ import annotations

import json

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser

from hxportal.api.parsers import json_depth_exceeds


class BenchmarkJSONParser(BaseParser):
    """JSON that lets NaN / Infinity through, so the service names the row that holds them."""

    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None):
        raw = stream.read() if stream is not None else b""
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError("Request body is not valid UTF-8.") from exc
        if json_depth_exceeds(text, settings.HX_MAX_JSON_DEPTH):
            raise ParseError(f"JSON nested deeper than {settings.HX_MAX_JSON_DEPTH} levels.")
        try:
            return json.loads(text, parse_constant=float)
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from exc


class CSVTextParser(BaseParser):
    """``text/csv`` bodies arrive as one string."""

    media_type = "text/csv"

    def parse(self, stream, media_type=None, parser_context=None):
        raw = stream.read() if stream is not None else b""
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError("CSV body is not valid UTF-8.") from exc
