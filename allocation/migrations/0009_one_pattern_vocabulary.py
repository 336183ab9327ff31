"""One vocabulary of communication patterns: jobs and recommendations take the
simulator's names (``all2all`` ...) instead of the hyphenated ones; stored rows
are renamed both ways."""

from django.db import migrations, models

RENAMES = {
    "all-to-all": "all2all",
    "all-reduce": "allreduce",
    "stencil-4": "stencil4",
    "stencil-8": "stencil8",
    "random-involution": "random_involution",
}


def _rename(apps, mapping):
    for model in ("Job", "Recommendation"):
        rows = apps.get_model("allocation", model).objects
        for old, new in mapping.items():
            rows.filter(pattern=old).update(pattern=new)


def forward(apps, schema_editor):
    _rename(apps, RENAMES)


def backward(apps, schema_editor):
    _rename(apps, {new: old for old, new in RENAMES.items()})


class Migration(migrations.Migration):

    dependencies = [
        ("allocation", "0008_site_settings"),
    ]

    operations = [
        migrations.AlterField(
            model_name="job",
            name="pattern",
            field=models.CharField(choices=[
                ("all2all", "All-to-all"), ("allreduce", "All-reduce"),
                ("stencil4", "Stencil (4 neighbours)"), ("stencil8", "Stencil (8 neighbours)"),
                ("random_involution", "Random involution"), ("uniform", "Uniform"),
                ("unknown", "Unknown")], default="unknown", max_length=24),
        ),
        migrations.RunPython(forward, backward),
    ]
