from django.apps import AppConfig


class HxportalConfig(AppConfig):
    name = "hxportal"
    verbose_name = "hxportal framework"
    default_auto_field = "django.db.models.BigAutoField"
