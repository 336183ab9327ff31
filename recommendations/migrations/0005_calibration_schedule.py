"""Beat entries of calibrations (hx-maintenance queue), editable in the admin: start
one for every machine shape without one on the running engine (every 10 minutes, so a
new machine or an engine upgrade is calibrated soon), and rebuild running
calibrations' tables from the runs that finished (every minute)."""

from django.db import migrations

ENTRIES = (
    ("start missing calibrations", "hx.recommendations.calibrate_machines", 600,
     "A calibration for every machine shape that has none on the running engine "
     "(HX_CALIBRATE_AUTOMATICALLY)."),
    ("refresh running calibrations", "hx.recommendations.refresh_calibrations", 60,
     "Running calibrations' tables rebuilt from the runs that finished."),
)


def create(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    for name, task, seconds, description in ENTRIES:
        every, _ = IntervalSchedule.objects.get_or_create(every=seconds, period="seconds")
        PeriodicTask.objects.get_or_create(name=name, defaults={
            "task": task, "interval": every, "enabled": True, "kwargs": "{}",
            "description": description})


def remove(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(
        name__in=[name for name, *_ in ENTRIES]).delete()


class Migration(migrations.Migration):

    dependencies = [
        ("recommendations", "0004_calibration"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create, remove)]
