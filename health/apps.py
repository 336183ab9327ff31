from django.apps import AppConfig


class HealthConfig(AppConfig):
    name = "health"
    verbose_name = "Node health and spare nodes"
    default_auto_field = "django.db.models.BigAutoField"
