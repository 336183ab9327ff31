from django.contrib import admin
from django.contrib.auth.admin import UserAdmin

from hxportal.models import ApiToken, User


@admin.register(User)
class PortalUserAdmin(UserAdmin):
    fieldsets = (*UserAdmin.fieldsets, ("Portal", {"fields": ("role",)}))
    list_display = ("username", "email", "role", "is_active", "last_login")
    list_filter = ("role", "is_active")


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("prefix", "user", "name", "scope", "read_only", "created_at", "expires_at",
                    "revoked_at", "last_used_at")
    list_filter = ("scope", "read_only")
    readonly_fields = ("prefix", "key_hash", "created_at", "last_used_at")
    search_fields = ("user__username", "name", "prefix")
