import django.core.validators
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("seasons", "0008_archive_note"),
    ]

    operations = [
        migrations.AddField(
            model_name="board",
            name="shards",
            field=models.PositiveSmallIntegerField(
                blank=True,
                default=1,
                help_text="Sorted sets each new season's standings are spread over by player (1 "
                "to 16); more than one only on a Redis Cluster with as many nodes. Seasons "
                "already created keep theirs.",
                validators=[
                    django.core.validators.MinValueValidator(1),
                    django.core.validators.MaxValueValidator(16),
                ],
            ),
        ),
        # Every season created before shards existed has one sorted set.
        migrations.AddField(
            model_name="season",
            name="shards",
            field=models.PositiveSmallIntegerField(
                blank=True,
                default=1,
                help_text="Sorted sets the standings are spread over by player; empty: the "
                "board's. Fixed once the season starts.",
                validators=[
                    django.core.validators.MinValueValidator(1),
                    django.core.validators.MaxValueValidator(16),
                ],
            ),
            preserve_default=False,
        ),
        migrations.AddConstraint(
            model_name="board",
            constraint=models.CheckConstraint(
                condition=models.Q(("shards__gte", 1), ("shards__lte", 16)),
                name="board_shards_in_range",
            ),
        ),
        migrations.AddConstraint(
            model_name="season",
            constraint=models.CheckConstraint(
                condition=models.Q(("shards__gte", 1), ("shards__lte", 16)),
                name="season_shards_in_range",
            ),
        ),
    ]
