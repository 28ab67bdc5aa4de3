from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    # Built without blocking the players' table: at a hundred million players the scan takes
    # minutes, and results keep creating players meanwhile.
    atomic = False

    dependencies = [
        ("matches", "0006_results_without_per_row_lock_checks"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="player",
            index=models.Index(
                condition=models.Q(("banned_at__isnull", False)),
                fields=["player_id"],
                name="player_banned",
            ),
        ),
    ]
