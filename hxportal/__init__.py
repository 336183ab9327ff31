"""hxportal project package: settings, URLs, the Celery app and the framework layer."""

from hxportal.celery import app as celery_app

__all__ = ["celery_app"]
