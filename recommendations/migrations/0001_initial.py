"""The recommendations models, moved from allocation: the same tables (state only);
their content types (and so permissions and admin history) follow them."""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


MODELS = ['recommendation', 'policyprediction']


def _relabel(apps, source: str, target: str) -> None:
    """Give the models' content types the new app label, so permissions, group
    grants and admin log entries follow them. A row Django already made under
    the target label (after a migration back and forth) gives way to the old one,
    which carries the grants."""
    content_type = apps.get_model("contenttypes", "ContentType")
    for model in MODELS:
        if content_type.objects.filter(app_label=source, model=model).exists():
            content_type.objects.filter(app_label=target, model=model).delete()
            content_type.objects.filter(app_label=source, model=model).update(app_label=target)


def move_content_types(apps, schema_editor):
    _relabel(apps, "allocation", "recommendations")


def move_content_types_back(apps, schema_editor):
    _relabel(apps, "recommendations", "allocation")


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('allocation', '0010_models_move_to_health_and_recommendations'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        # Only Django's model state moves; the tables keep their names and rows.
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
            migrations.CreateModel(
                name='Recommendation',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('name', models.CharField(default='job', max_length=128)),
                    ('external_id', models.CharField(blank=True, default='', max_length=64)),
                    ('node_count', models.PositiveIntegerField()),
                    ('pattern', models.CharField(max_length=24)),
                    ('inputs', models.JSONField(default=dict, help_text='Times and spare-model parameters.')),
                    ('cache_key', models.CharField(db_index=True, max_length=64)),
                    ('status', models.CharField(choices=[('computing', 'Computing'), ('ready', 'Ready'), ('accepted', 'Accepted'), ('failed', 'Failed')], db_index=True, default='computing', max_length=16)),
                    ('method', models.CharField(choices=[('simulation', 'Simulated on the live occupancy'), ('analytic', 'Analytic score (partition bandwidth and locality)')], default='analytic', max_length=16)),
                    ('note', models.CharField(blank=True, default='', max_length=255)),
                    ('ranking', models.JSONField(blank=True, default=list)),
                    ('recommended', models.JSONField(blank=True, null=True)),
                    ('deadline', models.DateTimeField()),
                    ('created_at', models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                    ('finished_at', models.DateTimeField(blank=True, null=True)),
                    ('accepted_at', models.DateTimeField(blank=True, null=True)),
                    ('job', models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='recommendation', to='allocation.job')),
                    ('machine', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='recommendations', to='allocation.machine')),
                    ('user', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='recommendations', to=settings.AUTH_USER_MODEL)),
                ],
                options={
                    'db_table': 'allocation_recommendation',
                    'ordering': ['-created_at', '-id'],
                },
            ),
            migrations.CreateModel(
                name='PolicyPrediction',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('status', models.CharField(choices=[('pending', 'Pending'), ('running', 'Running'), ('succeeded', 'Succeeded'), ('failed', 'Failed'), ('cancelled', 'Cancelled')], db_index=True, default='pending', max_length=16)),
                    ('parameters', models.JSONField(blank=True, default=dict)),
                    ('seed', models.BigIntegerField(blank=True, null=True)),
                    ('progress', models.FloatField(default=0.0)),
                    ('log', models.JSONField(blank=True, default=list)),
                    ('result', models.JSONField(blank=True, null=True)),
                    ('error', models.TextField(blank=True, default='')),
                    ('attempts', models.PositiveIntegerField(default=0)),
                    ('sent_at', models.DateTimeField(blank=True, help_text='When the broker accepted the task message.', null=True)),
                    ('created_at', models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                    ('started_at', models.DateTimeField(blank=True, null=True)),
                    ('finished_at', models.DateTimeField(blank=True, null=True)),
                    ('policy', models.CharField(max_length=32)),
                    ('user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ('recommendation', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='predictions', to='recommendations.recommendation')),
                ],
                options={
                    'db_table': 'allocation_policyprediction',
                    'ordering': ['-created_at', '-id'],
                    'abstract': False,
                },
            ),
            migrations.AddIndex(
                model_name='recommendation',
                index=models.Index(fields=['machine', 'cache_key', 'created_at'], name='rec_machine_key_created'),
            ),
            migrations.AddConstraint(
                model_name='policyprediction',
                constraint=models.UniqueConstraint(fields=('recommendation', 'policy'), name='prediction_one_per_policy'),
            ),
            ],
        ),
        migrations.RunPython(move_content_types, move_content_types_back),
    ]
