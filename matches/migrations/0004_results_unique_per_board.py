import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    """A result is unique per board, match and player (it was per season), so a retry that would
    now fall into another season is still found."""

    dependencies = [
        ("matches", "0003_lean_indexes_and_mirror_outbox"),
        ("seasons", "0003_board_max_points_per_result_season_reconcile_cursor"),
    ]

    operations = [
        migrations.AddField(
            model_name="matchresult",
            name="board",
            field=models.ForeignKey(
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="seasons.board",
            ),
        ),
        migrations.RunSQL(
            sql="""
                UPDATE matches_matchresult r SET board_id = s.board_id
                FROM seasons_season s WHERE s.id = r.season_id
            """,
            reverse_sql=migrations.RunSQL.noop,
        ),
        migrations.AlterField(
            model_name="matchresult",
            name="board",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="seasons.board",
            ),
        ),
        migrations.RemoveConstraint(
            model_name="matchresult",
            name="result_unique_per_match_and_player",
        ),
        migrations.AddConstraint(
            model_name="matchresult",
            constraint=models.UniqueConstraint(
                fields=("board", "match_id", "player"),
                name="result_unique_per_board_match_player",
            ),
        ),
    ]
