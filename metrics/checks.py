"""Start-up check of the metrics settings: a mistyped network must not silently
open or close ``/metrics``."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, register

from metrics.access import parse_networks


@register()
def allowed_networks(app_configs, **kwargs) -> list[Error]:
    try:
        parse_networks(tuple(getattr(settings, "HX_METRICS_ALLOWED_NETS", ())))
    except ValueError as exc:
        return [Error(f"HX_METRICS_ALLOWED_NETS: {exc}", id="metrics.E001")]
    return []
