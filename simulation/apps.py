from django.apps import AppConfig


class SimulationConfig(AppConfig):
    name = "simulation"
    verbose_name = "Network simulation"
    default_auto_field = "django.db.models.BigAutoField"
