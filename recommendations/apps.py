from django.apps import AppConfig


class RecommendationsConfig(AppConfig):
    name = "recommendations"
    verbose_name = "Policy and spare-node recommendations"
    default_auto_field = "django.db.models.BigAutoField"
