"""The daily "estimate all machines" beat entry, editable afterwards in the admin."""

from django.db import migrations

TASK_NAME = "estimate all machines"
TASK = "allocation.tasks.estimate_all_machines"


def create_schedule(apps, schema_editor):
    CrontabSchedule = apps.get_model("django_celery_beat", "CrontabSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    if PeriodicTask.objects.filter(name=TASK_NAME).exists():
        return
    crontab, _ = CrontabSchedule.objects.get_or_create(
        minute="17", hour="3", day_of_week="*", day_of_month="*", month_of_year="*",
        timezone="UTC")
    PeriodicTask.objects.create(
        name=TASK_NAME, task=TASK, crontab=crontab, enabled=True, kwargs="{}",
        description="Daily re-estimation of p_abn, alpha_abn and t_bench for every machine "
                    "from the last 30 days of benchmark results.")


def remove_schedule(apps, schema_editor):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTask.objects.filter(name=TASK_NAME).delete()


class Migration(migrations.Migration):

    dependencies = [
        ("allocation", "0003_benchmarks_estimates"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create_schedule, remove_schedule)]
