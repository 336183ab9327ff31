"""Parsers of benchmark uploads: JSON that keeps NaN and Infinity, and CSV bodies."""

from __future__ import annotations

from rest_framework.parsers import BaseParser

from hxportal.api.parsers import load_json, request_text


class BenchmarkJSONParser(BaseParser):
    """JSON that lets NaN / Infinity through, so the service names the row that holds them."""

    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None):
        return load_json(request_text(stream), parse_constant=float)


class CSVTextParser(BaseParser):
    """``text/csv`` bodies arrive as one string."""

    media_type = "text/csv"

    def parse(self, stream, media_type=None, parser_context=None):
        return request_text(stream, "CSV body")
