"""The API and form fields of a job's communication pattern. The vocabulary is
``allocation.hyperx.patterns`` (the simulator's names), for jobs,
recommendations and simulations alike. The hyphenated spellings that jobs used
before (``all-to-all``, ``stencil-4``, ...) are read as aliases everywhere a
pattern arrives (API, forms, CLI) and never written.
"""

from __future__ import annotations

from django import forms
from rest_framework import serializers

from allocation.hyperx.patterns import PATTERN_ALIASES, canonical_pattern
from allocation.models import CommPattern

__all__ = ["PATTERN_ALIASES", "PatternChoiceField", "PatternFormField", "canonical"]


def canonical(name: object) -> object:
    """A job pattern in the one vocabulary (aliases mapped, anything else as is)."""
    return canonical_pattern(name)


class PatternChoiceField(serializers.ChoiceField):
    """The API's ``pattern``: ``CommPattern`` values, aliases accepted."""

    def __init__(self, **kwargs: object) -> None:
        kwargs.setdefault("choices", CommPattern.choices)
        kwargs.setdefault("default", CommPattern.UNKNOWN)
        super().__init__(**kwargs)

    def to_internal_value(self, data: object) -> str:
        return super().to_internal_value(canonical(data))


class PatternFormField(forms.ChoiceField):
    """The pages' ``pattern`` select; a posted alias is read as its pattern."""

    def to_python(self, value: object) -> str:
        return super().to_python(canonical(value))
