"""Beat entry every 2 minutes: recompute every machine's health snapshot for
/metrics (hx-maintenance queue). Editable in the admin."""

from django.db import migrations

NAME = "refresh health snapshots for metrics"
TASK = "hx.metrics.refresh_health_snapshots"


def create(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    every, _ = IntervalSchedule.objects.get_or_create(every=120, period="seconds")
    PeriodicTask.objects.get_or_create(name=NAME, defaults={
        "task": TASK, "interval": every, "enabled": True, "kwargs": "{}",
        "description": "Drain candidates and the watch list of every machine, stored for "
                       "/metrics (their age is hx_health_snapshot_age_seconds)."})


def remove(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=NAME).delete()


class Migration(migrations.Migration):

    dependencies = [
        ("metrics", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create, remove)]
