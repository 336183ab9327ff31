"""Benchmark results, estimates and estimation runs move to the health app;
recommendations and policy predictions to the recommendations app (state only)."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('allocation', '0009_one_pattern_vocabulary'),
    ]

    operations = [
        # Only Django's model state moves; the tables keep their names and rows.
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
            migrations.RemoveField(
                model_name='estimate',
                name='machine',
            ),
            migrations.RemoveField(
                model_name='estimate',
                name='run',
            ),
            migrations.RemoveField(
                model_name='estimationrun',
                name='machine',
            ),
            migrations.RemoveField(
                model_name='estimationrun',
                name='user',
            ),
            migrations.RemoveField(
                model_name='policyprediction',
                name='recommendation',
            ),
            migrations.RemoveField(
                model_name='policyprediction',
                name='user',
            ),
            migrations.RemoveField(
                model_name='recommendation',
                name='job',
            ),
            migrations.RemoveField(
                model_name='recommendation',
                name='machine',
            ),
            migrations.RemoveField(
                model_name='recommendation',
                name='user',
            ),
            migrations.DeleteModel(
                name='BenchmarkResult',
            ),
            migrations.DeleteModel(
                name='Estimate',
            ),
            migrations.DeleteModel(
                name='EstimationRun',
            ),
            migrations.DeleteModel(
                name='PolicyPrediction',
            ),
            migrations.DeleteModel(
                name='Recommendation',
            ),
            ],
        ),
    ]
