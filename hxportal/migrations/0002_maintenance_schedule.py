"""Beat entries every minute: re-send runs the broker never got; answer overdue
recommendations analytically. Both are editable in the admin."""

from django.db import migrations

SCHEDULES = [
    ("resend unsent runs", "hxportal.tasks.resend_unsent_runs",
     "Sends tracked runs whose message never reached the broker (it was down)."),
    ("expire overdue recommendations", "allocation.tasks.expire_recommendations",
     "Answers recommendations whose simulations missed the deadline analytically."),
]


def create(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    every_minute, _ = IntervalSchedule.objects.get_or_create(every=1, period="minutes")
    for name, task, description in SCHEDULES:
        PeriodicTask.objects.get_or_create(name=name, defaults={
            "task": task, "interval": every_minute, "enabled": True, "kwargs": "{}",
            "description": description})


def remove(apps, schema_editor):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTask.objects.filter(name__in=[name for name, _, _ in SCHEDULES]).delete()


class Migration(migrations.Migration):

    dependencies = [
        ("hxportal", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create, remove)]
