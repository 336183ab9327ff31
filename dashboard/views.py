"""The pages that draw on every domain app: the home page and the glossary."""

from __future__ import annotations

from django.views.generic import TemplateView

from dashboard import glossary, overview
from health.constants import DEFAULT_WINDOW_DAYS
from hxportal.views import RoleRequiredMixin


class OverviewView(RoleRequiredMixin, TemplateView):
    """The home page: one card per machine (occupancy, jobs, health, estimate,
    failures) and the site's simulations; a fixed number of queries."""

    template_name = "dashboard/overview.html"

    def get_context_data(self, **kwargs):
        user = self.request.user
        return super().get_context_data(
            summaries=overview.machine_summaries(user), activity=overview.site_activity(user),
            window_days=DEFAULT_WINDOW_DAYS, **kwargs)


class GlossaryView(RoleRequiredMixin, TemplateView):
    template_name = "glossary.html"

    def get_context_data(self, **kwargs):
        return super().get_context_data(sections=glossary.sections(), **kwargs)
