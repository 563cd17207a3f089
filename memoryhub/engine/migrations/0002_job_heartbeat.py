"""Jobs carry their task's name, a heartbeat, their attempts and a note, so that a
job whose worker died is found, sent again once, then failed with the reason. Jobs
already queued or running get their task from their kind and their last sign of life
from when they were queued or started: the first sweep finds those stranded before."""

from django.db import migrations, models
from django.db.models import F

TASK_OF_KIND = {
    "distill": "facts.distill",
    "extract": "facts.extract",
    "import": "facts.import",
    "concept_build": "concepts.build",
}


def fill(apps, schema_editor):
    Job = apps.get_model("engine", "Job")
    for kind, task in TASK_OF_KIND.items():
        Job.objects.filter(kind=kind).update(task=task)
    Job.objects.filter(state="queued").update(heartbeat_at=F("created_at"))
    Job.objects.filter(state="running").update(heartbeat_at=F("started_at"), attempts=1)


class Migration(migrations.Migration):
    dependencies = [
        ("engine", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="job",
            name="attempts",
            field=models.PositiveSmallIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="job",
            name="heartbeat_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="job",
            name="note",
            field=models.TextField(blank=True, default=""),
        ),
        migrations.AddField(
            model_name="job",
            name="task",
            field=models.CharField(blank=True, default="", max_length=100),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
