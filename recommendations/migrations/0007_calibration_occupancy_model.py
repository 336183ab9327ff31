# Calibrations made before the occupancy model was stored ran on the contiguous machine.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('recommendations', '0006_prediction_per_seed'),
    ]

    operations = [
        migrations.AddField(
            model_name='calibration',
            name='occupancy_model',
            field=models.CharField(
                db_index=True, default='contiguous',
                help_text="The machine other jobs' endpoints were held on (recommendations."
                          "calibration.OCCUPANCY_MODEL): only today's model's calibrations "
                          "are read.",
                max_length=16),
            preserve_default=False,
        ),
    ]
