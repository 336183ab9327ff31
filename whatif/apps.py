from django.apps import AppConfig


class WhatIfConfig(AppConfig):
    name = "whatif"
    verbose_name = "What-if replay"
    default_auto_field = "django.db.models.BigAutoField"
