"""The pages that draw on every domain app: the home page (the operations board),
the glossary and the global search."""

from __future__ import annotations

from django.shortcuts import redirect
from django.views.generic import TemplateView

from dashboard import board, glossary, overview, search
from health.constants import DEFAULT_WINDOW_DAYS
from hxportal.views import LiveFragmentMixin, RoleRequiredMixin

#: How the bins of each range are named on the board.
BIN_LABELS = {"day": "15-minute", "week": "hourly", "month": "6-hourly"}


class OverviewView(RoleRequiredMixin, LiveFragmentMixin, TemplateView):
    """The home page: the operations board, one card per machine (occupancy, grid
    thumbnail, usage over a range, drains, health, estimate trend, Slurm sync) and the
    site's simulations; a fixed number of queries whatever the number of machines.
    ``?range=day|week|month`` is the charts' range (a permalink)."""

    template_name = "dashboard/overview.html"
    live_template = "dashboard/_board_fragment.html"

    def get_context_data(self, **kwargs):
        user = self.request.user
        range_name = board.pick_range(self.request.GET.get("range"))
        summaries = overview.machine_summaries(user)
        boards = board.boards([s.machine for s in summaries], range_name)
        for summary in summaries:
            summary.board = boards[summary.machine.pk]
        return super().get_context_data(
            summaries=summaries, activity=overview.site_activity(user),
            window_days=DEFAULT_WINDOW_DAYS, range=range_name,
            ranges=list(board.RANGE_LABELS.items()),
            range_label=board.RANGE_LABELS[range_name], bin_label=BIN_LABELS[range_name],
            **kwargs)


class GlossaryView(RoleRequiredMixin, TemplateView):
    template_name = "glossary.html"

    def get_context_data(self, **kwargs):
        return super().get_context_data(sections=glossary.sections(), **kwargs)


class SearchView(RoleRequiredMixin, TemplateView):
    """The top bar's search: a job id, a host or a hostlist. One job, or nodes of one
    machine, opens that page at once; anything else lists what matched. A query that
    is neither a job id nor a valid hostlist is a 400 saying why."""

    template_name = "dashboard/search.html"

    def get(self, request, *args, **kwargs):
        result = search.search(request.GET.get("q", ""), request.user)
        if result.target:
            return redirect(result.target)
        context = self.get_context_data(result=result, search_query=result.query, **kwargs)
        return self.render_to_response(context, status=400 if result.error else 200)
