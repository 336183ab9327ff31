"""Validators for free text and files that operators and scripts send."""

from __future__ import annotations

import unicodedata

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile


def no_control_characters(value: str) -> None:
    """Names are shown in pages, logs and Slurm comments: no control characters
    (newlines, escapes, NUL, bidi overrides)."""
    bad = [ch for ch in str(value) if unicodedata.category(ch) in ("Cc", "Cf")]
    if bad:
        raise ValidationError(f"contains control character U+{ord(bad[0]):04X}",
                              code="control_character")


def uploaded_text(upload: UploadedFile, field: str = "file") -> str:
    """An uploaded file's text: at most ``HX_MAX_BODY_BYTES``, UTF-8 (the page and the
    API refuse a file alike, naming ``field``)."""
    if upload.size > settings.HX_MAX_BODY_BYTES:
        raise ValidationError({field: ["larger than the upload limit"]})
    try:
        return upload.read().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValidationError({field: ["not UTF-8 text"]}) from exc
