"""Validators for free text that operators and scripts send."""

from __future__ import annotations

import unicodedata

from django.core.exceptions import ValidationError


def no_control_characters(value: str) -> None:
    """Names are shown in pages, logs and Slurm comments: no control characters
    (newlines, escapes, NUL, bidi overrides)."""
    bad = [ch for ch in str(value) if unicodedata.category(ch) in ("Cc", "Cf")]
    if bad:
        raise ValidationError(f"contains control character U+{ord(bad[0]):04X}",
                              code="control_character")
