"""``GET /metrics``: the Prometheus text format (or OpenMetrics when asked)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_not_required
from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.views import APIView

from hxportal.roles import Role
from metrics import services
from metrics.access import MetricsPermission
from metrics.collector import PortalCollector


def scrape() -> CollectorRegistry:
    """A registry holding only the portal's collector (no per-process metrics: every
    web process must answer the same)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(PortalCollector(lambda: services.read_all(services.queue_lengths())))
    return registry


class ScraperNegotiation(BaseContentNegotiation):
    """The Accept header chooses the exposition format (the view does that); DRF's
    renderers only write refusals, always as JSON, never a 406."""

    def select_parser(self, request, parsers):
        return parsers[0] if parsers else None

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


@extend_schema(exclude=True)  # a text format for Prometheus, not part of the JSON API
class MetricsView(APIView):
    """Token or session (viewer and above, or a ``metrics``-scoped token), or a
    client in ``HX_METRICS_ALLOWED_NETS``; everyone else 401 / 403."""

    permission_classes = [MetricsPermission]
    content_negotiation_class = ScraperNegotiation
    read_role = Role.VIEWER
    allow_metrics_scope = True

    def get(self, request):
        encoder, content_type = choose_encoder(request.headers.get("Accept", ""))
        return HttpResponse(encoder(scrape()), content_type=content_type)


# Outside /api/, so the pages' sign-in middleware would redirect a scraper to the
# login page: the view answers 401 itself instead.
metrics_view = login_not_required(MetricsView.as_view())
