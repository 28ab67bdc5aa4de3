"""The archive (ArchivedStanding, SeasonReward) moves here from seasons, where the close that
writes it lives. Django's state only: the tables keep their names (db_table) and their rows,
constraints and indexes; nothing in the database changes but the admin's content types, renamed
so that the permissions granted on the archive follow it."""

import django.db.models.deletion
from django.db import migrations, models

MOVED = ("archivedstanding", "seasonreward")


def content_types_follow(from_app: str, to_app: str):
    def move(apps, schema_editor) -> None:
        content_types = apps.get_model("contenttypes", "ContentType")
        db = schema_editor.connection.alias
        for model in MOVED:
            # A content type the new app already has (made by a migrate that ran after the
            # move) keeps its own permissions; the old one is left for remove_stale_contenttypes.
            if content_types.objects.using(db).filter(app_label=to_app, model=model).exists():
                continue
            content_types.objects.using(db).filter(app_label=from_app, model=model).update(
                app_label=to_app
            )

    return move


class Migration(migrations.Migration):
    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("leaderboards", "0001_initial"),
        ("matches", "0011_pending_player_refreshes"),
        ("seasons", "0012_archive_moves_to_leaderboards"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ArchivedStanding",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("rank", models.PositiveIntegerField()),
                        ("competition_rank", models.PositiveIntegerField()),
                        ("points", models.IntegerField()),
                        ("reached_at", models.DateTimeField()),
                        ("note", models.TextField(blank=True, db_default="")),
                        (
                            "player",
                            models.ForeignKey(
                                db_constraint=False,
                                db_index=False,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="+",
                                to="matches.player",
                            ),
                        ),
                        (
                            "season",
                            models.ForeignKey(
                                db_constraint=False,
                                db_index=False,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="archived_standings",
                                to="seasons.season",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "seasons_archivedstanding",
                        "indexes": [models.Index(fields=["player"], name="archive_player")],
                        "constraints": [
                            models.UniqueConstraint(
                                models.OrderBy(models.F("season"), descending=True),
                                models.F("rank"),
                                name="archive_unique_rank",
                            ),
                            models.UniqueConstraint(
                                fields=("season", "player"), name="archive_unique_player"
                            ),
                        ],
                    },
                ),
                migrations.CreateModel(
                    name="SeasonReward",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("rank", models.PositiveIntegerField()),
                        ("reward_code", models.CharField(max_length=64)),
                        ("awarded_at", models.DateTimeField()),
                        (
                            "player",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="rewards",
                                to="matches.player",
                            ),
                        ),
                        (
                            "season",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="rewards",
                                to="seasons.season",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "seasons_seasonreward",
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("season", "player"), name="reward_once_per_season"
                            ),
                            models.UniqueConstraint(
                                fields=("season", "rank"), name="reward_unique_rank"
                            ),
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(
            content_types_follow("seasons", "leaderboards"),
            content_types_follow("leaderboards", "seasons"),
        ),
    ]
