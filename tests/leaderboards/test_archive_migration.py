"""The archive's move from seasons to leaderboards (seasons 0012, leaderboards 0002) changes
Django's state only: on a database of the previous schema with an archive in it, every row,
index and constraint stays as it was, the new models read the rows, and the permissions granted
on the archive follow it."""

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from leaderboards.models import ArchivedStanding, SeasonReward
from seasons.models import Season, SeasonState
from tests.migrating import migrate, migrated_back

# The leaves of the two apps before the move.
BEFORE_THE_MOVE = [("seasons", "0011_operator_permissions"), ("leaderboards", "0001_initial")]
# And just after it (later migrations change these tables for features of their own).
AFTER_THE_MOVE = [
    ("seasons", "0012_archive_moves_to_leaderboards"),
    ("leaderboards", "0002_archive_from_seasons"),
]
TABLES = ("seasons_archivedstanding", "seasons_seasonreward")


@pytest.fixture
def before_the_move(transactional_db: None) -> Iterator[None]:
    """The database as the previous schema left it."""
    with migrated_back(BEFORE_THE_MOVE):
        yield


def _schema() -> list[tuple[str, str]]:
    """The archive tables' indexes and constraints, by name and definition."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = ANY(%s)"
            " UNION ALL SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint"
            " WHERE conrelid IN (SELECT oid FROM pg_class WHERE relname = ANY(%s))"
            " ORDER BY 1",
            [list(TABLES), list(TABLES)],
        )
        return cursor.fetchall()


def _models_before_the_move() -> Any:
    """The models as the previous schema had them (later migrations added columns)."""
    return MigrationExecutor(connection).loader.project_state(BEFORE_THE_MOVE).apps


def test_the_archive_moves_to_leaderboards_with_its_rows_and_permissions(before_the_move):
    # Given an archived standing with a note and a reward, written as the old close wrote them,
    old = _models_before_the_move()
    board = old.get_model("seasons", "Board").objects.create(slug="archive", name="Archive")
    starts_at = datetime(2026, 11, 1, tzinfo=UTC)
    season = old.get_model("seasons", "Season").objects.create(
        board=board,
        slug="s1",
        name="Season 1",
        starts_at=starts_at,
        ends_at=starts_at + timedelta(days=30),
        grace_period=timedelta(hours=1),
        state=SeasonState.CLOSED,
        shards=1,  # the model's save() copies the board's; a historical model has no save()
    )
    old.get_model("matches", "Player").objects.create(player_id="p1")
    reached_at = datetime(2026, 11, 3, 12, 0, 7, tzinfo=UTC)
    awarded_at = datetime(2026, 11, 4, 0, 0, 1, tzinfo=UTC)
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO seasons_archivedstanding"
            " (season_id, rank, competition_rank, player_id, points, reached_at, note)"
            " VALUES (%s, 1, 1, 'p1', 420, %s, 'voided m7') RETURNING id",
            [season.pk, reached_at],
        )
        standing_id = cursor.fetchone()[0]
        cursor.execute(
            "INSERT INTO seasons_seasonreward"
            " (season_id, player_id, rank, reward_code, awarded_at)"
            " VALUES (%s, 'p1', 1, 'gold', %s) RETURNING id",
            [season.pk, awarded_at],
        )
        reward_id = cursor.fetchone()[0]
    # and the archive's content type as the seasons app had it, a permission on it granted.
    assert not ContentType.objects.filter(app_label="leaderboards", model="archivedstanding")
    seasons_archive, _ = ContentType.objects.get_or_create(
        app_label="seasons", model="archivedstanding"
    )
    may_view, _ = Permission.objects.get_or_create(
        content_type=seasons_archive,
        codename="view_archivedstanding",
        defaults={"name": "Can view archived standing"},
    )
    Group.objects.create(name="analysts").permissions.add(may_view)
    schema_before = _schema()

    # When the database is migrated across the move (and on to the latest schema),
    migrate(AFTER_THE_MOVE)
    schema_after_the_move = _schema()
    migrate()

    # then the rows read through the new models as they were written,
    standing = ArchivedStanding.objects.get(pk=standing_id)
    assert (
        standing.season_id,
        standing.rank,
        standing.competition_rank,
        standing.player_id,
        standing.points,
        standing.reached_at,
        standing.note,
    ) == (season.pk, 1, 1, "p1", 420, reached_at, "voided m7")
    reward = SeasonReward.objects.get(pk=reward_id)
    assert (reward.season_id, reward.player_id, reward.rank, reward.reward_code) == (
        season.pk,
        "p1",
        1,
        "gold",
    )
    assert reward.awarded_at == awarded_at
    assert list(Season.objects.get(pk=season.pk).rewards.values_list("pk", flat=True)) == [
        reward_id
    ]
    # the tables, indexes and constraints are the ones the previous schema made,
    assert (ArchivedStanding._meta.db_table, SeasonReward._meta.db_table) == TABLES
    assert schema_after_the_move == schema_before
    assert [name for name, _ in schema_before] == [
        "archive_player",
        "archive_unique_player",
        "archive_unique_player",
        "archive_unique_rank",
        "reward_once_per_season",
        "reward_once_per_season",
        "reward_unique_rank",
        "reward_unique_rank",
        "seasons_archivedstanding_competition_rank_check",
        "seasons_archivedstanding_pkey",
        "seasons_archivedstanding_pkey",
        "seasons_archivedstanding_rank_check",
        "seasons_seasonreward_pkey",
        "seasons_seasonreward_pkey",
        "seasons_seasonreward_player_id_a24888b0",
        "seasons_seasonreward_player_id_a24888b0_fk_matches_p",
        "seasons_seasonreward_player_id_a24888b0_like",
        "seasons_seasonreward_rank_check",
        "seasons_seasonreward_season_id_cf4c943d",
        "seasons_seasonreward_season_id_cf4c943d_fk_seasons_season_id",
    ]
    # and the permission granted on the archive is the leaderboards app's now.
    may_view.refresh_from_db()
    assert may_view.content_type.app_label == "leaderboards"
    assert not ContentType.objects.filter(app_label="seasons", model="archivedstanding").exists()
    assert Group.objects.get(name="analysts").permissions.get().natural_key() == (
        "view_archivedstanding",
        "leaderboards",
        "archivedstanding",
    )
