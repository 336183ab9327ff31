from django.apps import AppConfig


class SimulationConfig(AppConfig):
    name = "simulation"
    verbose_name = "Network simulation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # connect the Celery worker hooks (they act only in a worker process)
        from simulation import worker  # noqa: F401
