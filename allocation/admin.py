from django.contrib import admin

from allocation import health_admin  # noqa: F401 - registers the health models
from allocation.models import Allocation, Job, Machine, Node


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
