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
from tests.factories import SeasonFactory
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
            " ORDER BY 1, 2",
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


# The archive's last migration before it was partitioned by season.
BEFORE_PARTITIONS = [("leaderboards", "0006_operations_minutes")]


def _archive_kind_and_partitions() -> tuple[str, list[tuple[str, str]]]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT relkind FROM pg_class WHERE relname = 'seasons_archivedstanding'")
        (kind,) = cursor.fetchone()
        cursor.execute(
            "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i"
            " JOIN pg_class c ON c.oid = i.inhrelid"
            " WHERE i.inhparent = 'seasons_archivedstanding'::regclass ORDER BY 1"
        )
        return kind, cursor.fetchall()


def _archive_rows() -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, season_id, rank, player_id, points FROM seasons_archivedstanding"
            " ORDER BY id"
        )
        return cursor.fetchall()


def test_the_archive_partitioned_by_season_keeps_every_closed_seasons_rows(transactional_db):
    with migrated_back(BEFORE_PARTITIONS):
        # Given an archive of one table: a closed season's standings and a partial copy of a
        # season whose close was still running,
        closed = SeasonFactory(state=SeasonState.CLOSED)
        closing = SeasonFactory(state=SeasonState.CLOSING)
        reached_at = datetime(2026, 11, 3, 12, 0, 7, tzinfo=UTC)
        with connection.cursor() as cursor:
            rows = ((closed, 1, "p1"), (closed, 2, "p2"), (closing, 1, "p1"))
            for season, rank, player_id in rows:
                cursor.execute(
                    "INSERT INTO seasons_archivedstanding"
                    " (season_id, rank, competition_rank, player_id, points, reached_at)"
                    " VALUES (%s, %s, %s, %s, 10 - %s, %s)",
                    [season.pk, rank, rank, player_id, rank, reached_at],
                )
        rows_before, schema_before = _archive_rows(), _schema()
        assert _archive_kind_and_partitions() == ("r", [])

        # when the database is migrated to the archive partitioned by season,
        migrate()

        # then the closed season's rows stay, in the old table, now the partition of the
        # seasons it held; the partial copy is gone (the close takes its snapshot again);
        assert _archive_kind_and_partitions() == (
            "p",
            [
                ("archive_before_partitions", f"FOR VALUES IN ('{closed.pk}')"),
                ("archive_other_seasons", "DEFAULT"),
            ],
        )
        assert _archive_rows() == [row for row in rows_before if row[1] == closed.pk]
        standing = ArchivedStanding.objects.get(season=closed, rank=2)
        assert (standing.player_id, standing.points, standing.reached_at) == ("p2", 8, reached_at)
        # a row written since takes the next id, in the default partition;
        later = ArchivedStanding.objects.create(
            season=closing, rank=1, competition_rank=1, player_id="p3", points=1,
            reached_at=reached_at,
        )  # fmt: skip
        assert later.pk > max(row[0] for row in rows_before)
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM archive_other_seasons")
            assert cursor.fetchone() == (1,)

        # and migrated back, the archive is one table again, with every row and its old keys.
        migrate(BEFORE_PARTITIONS)
        assert _archive_kind_and_partitions() == ("r", [])
        assert [row[:2] for row in _archive_rows()] == [
            *[row[:2] for row in rows_before if row[1] == closed.pk],
            (later.pk, closing.pk),
        ]
        assert _schema() == schema_before
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO seasons_archivedstanding"
                " (season_id, rank, competition_rank, player_id, points, reached_at)"
                " VALUES (%s, 2, 2, 'p4', 0, now()) RETURNING id",
                [closing.pk],
            )
            assert cursor.fetchone()[0] > later.pk
