"""Beat entry every minute: queue again runs whose worker was killed outright
(their heartbeat stopped). Editable in the admin."""

from django.db import migrations

NAME = "recover stale runs"
TASK = "hxportal.tasks.recover_stale_runs"


def create(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    every_minute, _ = IntervalSchedule.objects.get_or_create(every=1, period="minutes")
    PeriodicTask.objects.get_or_create(name=NAME, defaults={
        "task": TASK, "interval": every_minute, "enabled": True, "kwargs": "{}",
        "description": "Queues again (or fails, after HX_RUN_MAX_ATTEMPTS) tracked runs "
                       "whose worker stopped beating for HX_RUN_LEASE_SECONDS."})


def remove(apps, schema_editor):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTask.objects.filter(name=NAME).delete()


class Migration(migrations.Migration):

    dependencies = [
        ("hxportal", "0002_maintenance_schedule"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create, remove)]
