"""The periodic tasks stored in the database (django-celery-beat) under the names the closing
tasks had while they lived in the seasons app take the names of the module that defines them,
leaderboards/tasks.py. The old names stay registered for one release (leaderboards/tasks.py), so
a message queued before this ran is still served."""

from django.db import migrations

RENAMED = {
    "seasons.tasks.close_due_seasons": "leaderboards.tasks.close_due_seasons",
    "seasons.tasks.close_season": "leaderboards.tasks.close_season",
    "seasons.tasks.remove_expired_standings": "leaderboards.tasks.remove_expired_standings",
}


def _rename(apps, mapping):
    periodic_task = apps.get_model("django_celery_beat", "PeriodicTask")
    for old, new in mapping.items():
        periodic_task.objects.filter(task=old).update(task=new)


def forwards(apps, schema_editor):
    _rename(apps, RENAMED)


def backwards(apps, schema_editor):
    _rename(apps, {new: old for old, new in RENAMED.items()})


class Migration(migrations.Migration):
    dependencies = [
        ("leaderboards", "0002_archive_from_seasons"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
