from django.contrib import admin

from simulation.models import SimulationRun, Sweep


@admin.register(Sweep)
class SweepAdmin(admin.ModelAdmin):
    list_display = ("name", "preset", "run_count", "user", "created_at")
    list_filter = ("preset",)
    search_fields = ("name",)


@admin.register(SimulationRun)
class SimulationRunAdmin(admin.ModelAdmin):
    list_display = ("id", "status", "sweep", "engine_version", "attempts", "wall_seconds",
                    "created_at")
    list_filter = ("status", "engine_version")
    list_select_related = ("sweep",)
    readonly_fields = ("config_hash", "result", "log", "summary")
