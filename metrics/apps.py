from django.apps import AppConfig


class MetricsConfig(AppConfig):
    """``/metrics`` for Prometheus: a collector over every app's rows, and the health
    snapshot that beat keeps fresh for it."""

    name = "metrics"
    verbose_name = "Metrics"

    def ready(self) -> None:
        from metrics import checks  # noqa: F401  registers the settings check
