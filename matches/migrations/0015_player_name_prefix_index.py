import django.contrib.postgres.indexes
import django.db.models.functions.text
from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    # Built CONCURRENTLY: the players' table is the largest one written, and a plain CREATE
    # INDEX would block every new player while it reads the table.
    atomic = False

    dependencies = [
        ("matches", "0014_player_segments_changes"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="player",
            index=models.Index(
                django.contrib.postgres.indexes.OpClass(
                    django.db.models.functions.text.Lower("display_name"), name="text_pattern_ops"
                ),
                condition=models.Q(("display_name", ""), _negated=True),
                name="player_name_prefix",
            ),
        ),
    ]
