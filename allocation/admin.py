from django.contrib import admin

from allocation.models import Allocation, Job, Machine, Node, SiteSettings
from allocation.services import machines


@admin.register(Machine)
class MachineAdmin(admin.ModelAdmin):
    list_display = ("name", "sides", "concentration", "created_at")
    readonly_fields = ("sides", "concentration", "hostname_pattern", "hostlist")


@admin.register(Node)
class NodeAdmin(admin.ModelAdmin):
    list_display = ("hostname", "machine", "coords", "local", "state", "state_reason")
    list_filter = ("machine", "state")
    search_fields = ("hostname",)
    list_select_related = ("machine",)


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ("name", "external_id", "machine", "node_count", "status", "policy", "owner")
    list_filter = ("machine", "status", "policy")


@admin.register(Allocation)
class AllocationAdmin(admin.ModelAdmin):
    list_display = ("job", "node", "role", "rank", "created_at", "released_at")
    list_select_related = ("job", "node")


@admin.register(SiteSettings)
class SiteSettingsAdmin(admin.ModelAdmin):
    """One row; the page /settings/ edits it through the service (validated)."""

    list_display = ("default_policy", "updated_at", "updated_by")
    readonly_fields = ("updated_at", "updated_by")

    def has_add_permission(self, request):
        return super().has_add_permission(request) and not SiteSettings.objects.exists()

    def save_model(self, request, obj, form, change):
        machines.set_site_settings(default_policy=obj.default_policy, user=request.user)
