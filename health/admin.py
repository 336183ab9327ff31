"""Admin pages for benchmark results, estimates and estimation runs.

Registered when ``allocation/admin.py`` imports this module
(``from allocation import health_admin  # noqa: F401``). Read-only: the
write path is ``health.services``.
"""

from __future__ import annotations

from django.contrib import admin

from health.models import BenchmarkResult, Estimate, EstimationRun


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(BenchmarkResult)
class BenchmarkResultAdmin(ReadOnlyAdmin):
    list_display = ("benchmark", "machine", "job", "node", "seconds", "measured_at")
    list_filter = ("machine", "benchmark")
    list_select_related = ("machine", "job", "node")
    search_fields = ("node__hostname", "job__external_id")


@admin.register(Estimate)
class EstimateAdmin(ReadOnlyAdmin):
    list_display = ("machine", "benchmark", "p_abn", "alpha_abn", "t_bench", "runs",
                    "created_at")
    list_filter = ("machine", "benchmark")


@admin.register(EstimationRun)
class EstimationRunAdmin(ReadOnlyAdmin):
    list_display = ("id", "machine", "benchmark", "window_days", "status", "created_at")
    list_filter = ("status", "machine")
