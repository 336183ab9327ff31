"""A logging filter that keeps API keys out of every log line."""

from __future__ import annotations

import logging
import re

TOKEN_PATTERN = re.compile(r"hx_[A-Za-z0-9_\-]{8,}")


def redact(text: str) -> str:
    return TOKEN_PATTERN.sub("hx_[redacted]", text)


class RedactTokensFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "hx_" in message:
            record.msg = redact(message)
            record.args = ()
        return True
