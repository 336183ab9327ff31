from django.apps import AppConfig


class HxportalConfig(AppConfig):
    name = "hxportal"
    verbose_name = "hxportal framework"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # connect the Celery worker hooks (they act only in a worker process)
        from hxportal import worker  # noqa: F401
