from django.apps import AppConfig


class AllocationConfig(AppConfig):
    name = "allocation"
    verbose_name = "HyperX machines and allocation"
    default_auto_field = "django.db.models.BigAutoField"
