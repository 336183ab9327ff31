"""The health models, moved from allocation: the same tables (state only);
their content types (and so permissions and admin history) follow them."""

import django.core.validators
import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


MODELS = ['benchmarkresult', 'estimate', 'estimationrun']


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
    _relabel(apps, "allocation", "health")


def move_content_types_back(apps, schema_editor):
    _relabel(apps, "health", "allocation")


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
                name='EstimationRun',
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
                    ('benchmark', models.CharField(blank=True, default='', help_text='Only this benchmark; blank for every benchmark.', max_length=64, validators=[django.core.validators.RegexValidator('^[A-Za-z0-9][A-Za-z0-9_.:+-]{0,63}\\Z', "Benchmark names are letters, digits, '_', '.', ':', '+' and '-' (at most 64).")])),
                    ('window_days', models.PositiveIntegerField(default=30)),
                    ('machine', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='estimation_runs', to='allocation.machine')),
                    ('user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ],
                options={
                    'db_table': 'allocation_estimationrun',
                    'ordering': ['-created_at', '-id'],
                    'abstract': False,
                },
            ),
            migrations.CreateModel(
                name='Estimate',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('benchmark', models.CharField(max_length=64, validators=[django.core.validators.RegexValidator('^[A-Za-z0-9][A-Za-z0-9_.:+-]{0,63}\\Z', "Benchmark names are letters, digits, '_', '.', ':', '+' and '-' (at most 64).")])),
                    ('window_start', models.DateTimeField()),
                    ('window_end', models.DateTimeField()),
                    ('runs', models.PositiveIntegerField(help_text='Node-runs in the sample.')),
                    ('abnormal_runs', models.PositiveIntegerField()),
                    ('jobs', models.PositiveIntegerField()),
                    ('nodes', models.PositiveIntegerField(default=0)),
                    ('t_bench', models.FloatField(help_text='Mean time of normal node-runs (s).')),
                    ('alpha_abn', models.FloatField(blank=True, help_text='Slowdown of abnormal runs; empty when none.', null=True)),
                    ('p_abn', models.FloatField()),
                    ('p_abn_low', models.FloatField()),
                    ('p_abn_high', models.FloatField()),
                    ('confidence', models.FloatField(default=0.95)),
                    ('rule', models.JSONField(blank=True, default=dict)),
                    ('created_at', models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                    ('machine', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='estimates', to='allocation.machine')),
                    ('run', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='estimates', to='health.estimationrun')),
                ],
                options={
                    'db_table': 'allocation_estimate',
                    'ordering': ['-created_at', '-id'],
                },
            ),
            migrations.CreateModel(
                name='BenchmarkResult',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('benchmark', models.CharField(max_length=64, validators=[django.core.validators.RegexValidator('^[A-Za-z0-9][A-Za-z0-9_.:+-]{0,63}\\Z', "Benchmark names are letters, digits, '_', '.', ':', '+' and '-' (at most 64).")])),
                    ('seconds', models.FloatField(help_text='Benchmark time on this node, in seconds (> 0).')),
                    ('measured_at', models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                    ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                    ('job', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='benchmark_results', to='allocation.job')),
                    ('machine', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='benchmark_results', to='allocation.machine')),
                    ('node', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='benchmark_results', to='allocation.node')),
                ],
                options={
                    'db_table': 'allocation_benchmarkresult',
                    'ordering': ['-measured_at', 'job_id', 'node_id'],
                    'indexes': [models.Index(fields=['machine', 'benchmark', 'measured_at'], name='bench_machine_bench_time'), models.Index(fields=['node', 'measured_at'], name='bench_node_time')],
                    'constraints': [models.UniqueConstraint(fields=('job', 'node', 'benchmark'), name='benchmark_result_unique_job_node_benchmark'), models.CheckConstraint(condition=models.Q(('seconds__gt', 0)), name='benchmark_result_seconds_positive')],
                },
            ),
            migrations.AddIndex(
                model_name='estimationrun',
                index=models.Index(fields=['machine', 'created_at'], name='estrun_machine_created'),
            ),
            migrations.AddIndex(
                model_name='estimate',
                index=models.Index(fields=['machine', 'benchmark', 'created_at'], name='estimate_machine_bench_time'),
            ),
            ],
        ),
        migrations.RunPython(move_content_types, move_content_types_back),
    ]
