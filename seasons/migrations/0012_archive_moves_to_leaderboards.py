"""The archive (ArchivedStanding, SeasonReward) belongs to the app whose close writes it:
leaderboards/migrations/0002_archive_from_seasons.py takes the models over. Django's state only:
the tables, their rows, constraints and indexes stay as they are, under their names."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("seasons", "0011_operator_permissions"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="ArchivedStanding"),
                migrations.DeleteModel(name="SeasonReward"),
            ],
            database_operations=[],
        ),
    ]
