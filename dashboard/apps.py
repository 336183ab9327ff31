from django.apps import AppConfig


class DashboardConfig(AppConfig):
    """The home page and the glossary: the pages that draw on every domain app."""

    name = "dashboard"
    verbose_name = "Dashboard"
