import django.db.models.deletion
from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    # The player index is built without blocking the archive (CONCURRENTLY): archives of past
    # seasons hold many millions of rows.
    atomic = False

    dependencies = [
        ("matches", "0008_players_without_pattern_index"),
        ("seasons", "0005_constraint_messages"),
    ]

    operations = [
        migrations.AlterField(
            model_name="archivedstanding",
            name="player",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="matches.player",
            ),
        ),
        migrations.AlterField(
            model_name="archivedstanding",
            name="season",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="archived_standings",
                to="seasons.season",
            ),
        ),
        AddIndexConcurrently(
            model_name="archivedstanding",
            index=models.Index(fields=["player"], name="archive_player"),
        ),
        # The rank key, newest season first (the admin's order): only the close writes the
        # archive, so the rebuild of this index holds up nothing else.
        migrations.RemoveConstraint(model_name="archivedstanding", name="archive_unique_rank"),
        migrations.AddConstraint(
            model_name="archivedstanding",
            constraint=models.UniqueConstraint(
                models.OrderBy(models.F("season"), descending=True),
                models.F("rank"),
                name="archive_unique_rank",
            ),
        ),
    ]
