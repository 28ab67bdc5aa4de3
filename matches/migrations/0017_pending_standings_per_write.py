"""The mirror's outbox holds one row per write instead of one per standing.

Rows waiting at the upgrade keep their ids (the stamps of their standings against corrections)
and become rows of one standing each. Going back drops the rows still waiting: drain the mirror
first (stop the writes and wait for the sweep), or let the reconciliation's walk repair what they
held.
"""

from django.db import migrations, models

FOLD = """
UPDATE matches_pendingstanding
SET standings = jsonb_build_object(
    season_id::text, jsonb_build_array(jsonb_build_array(player_id, composite)))
"""


class Migration(migrations.Migration):
    dependencies = [
        ("matches", "0016_player_profile_changes"),
    ]

    operations = [
        migrations.AddField(
            model_name="pendingstanding",
            name="standings",
            field=models.JSONField(null=True),
        ),
        migrations.RunSQL(FOLD, reverse_sql="DELETE FROM matches_pendingstanding"),
        migrations.RemoveField(model_name="pendingstanding", name="season"),
        migrations.RemoveField(model_name="pendingstanding", name="player_id"),
        migrations.RemoveField(model_name="pendingstanding", name="composite"),
        migrations.AlterField(
            model_name="pendingstanding",
            name="standings",
            field=models.JSONField(),
        ),
        # A batch's row (about 35 bytes a standing) stays in the table's page uncompressed up to
        # 8 kB instead of being compressed into TOAST past 2 kB: it lives for milliseconds. A
        # hundredth as many rows are deleted a second now, so vacuum after 500, not 5,000.
        migrations.RunSQL(
            sql="ALTER TABLE matches_pendingstanding SET (toast_tuple_target = 8160,"
            " autovacuum_vacuum_threshold = 500)",
            reverse_sql="ALTER TABLE matches_pendingstanding RESET (toast_tuple_target),"
            " SET (autovacuum_vacuum_threshold = 5000)",
        ),
    ]
