"""Beat entry every 30 s: sync each machine linked to Slurm whose own interval has
passed (``SlurmLink.interval_seconds``). Editable in the admin."""

from django.db import migrations

NAME = "sync machines with Slurm"
TASK = "hx.slurm.sync_due"


def create(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    every, _ = IntervalSchedule.objects.get_or_create(every=30, period="seconds")
    PeriodicTask.objects.get_or_create(name=NAME, defaults={
        "task": TASK, "interval": every, "enabled": True, "kwargs": "{}",
        "description": "Syncs machines linked to Slurm (nodes, jobs, history) on their "
                       "interval."})


def remove(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=NAME).delete()


class Migration(migrations.Migration):

    dependencies = [
        ("allocation", "0011_slurm_link"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create, remove)]
