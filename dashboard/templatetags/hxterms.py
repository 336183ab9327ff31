"""``{% term "p_abn" %}``: a glossary word with its definition as a tooltip, linking to
its entry on the glossary page."""

from __future__ import annotations

from django import template
from django.urls import reverse
from django.utils.html import format_html

from dashboard.glossary import BY_KEY

register = template.Library()


@register.simple_tag
def term(key: str, label: str = "") -> str:
    """``{% term "pb_exact" "PB" %}`` -> ``<a class="term" href="/glossary/#term-pb_exact"
    title="...">PB</a>``; an unknown key is a template bug, so it fails loudly."""
    entry = BY_KEY[key]
    return format_html('<a class="term" href="{}#term-{}" title="{}" data-term="{}">{}</a>',
                       reverse("dashboard:glossary"), entry.key,
                       f"{entry.name}: {entry.short}", entry.key, label or entry.name)
