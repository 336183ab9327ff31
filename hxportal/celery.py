"""The Celery application; tasks are autodiscovered from the apps' ``tasks.py``."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hxportal.settings.local")

app = Celery("hxportal")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
