"""Site-wide settings an admin edits in the portal (one row)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class SiteSettings(models.Model):
    """The one row of site settings; a blank value falls back to the environment."""

    default_policy = models.CharField(
        max_length=64, blank=True, default="",
        help_text="The site's default allocation policy; blank: HX_DEFAULT_POLICY.")
    updated_at = models.DateTimeField(default=timezone.now)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")

    class Meta:
        verbose_name = "site settings"
        verbose_name_plural = "site settings"

    def __str__(self) -> str:
        return f"site settings (default policy {self.default_policy or 'from HX_DEFAULT_POLICY'})"
