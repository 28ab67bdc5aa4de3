"""The archive partitioned by season: the close fills a season's own partition bare, checks it
as it is written, indexes it once full and attaches it; a snapshot taken again replaces it."""

import psycopg
import pytest
from django.db import OperationalError, connection, transaction
from django.utils import timezone

from leaderboards import archive_partitions, closing, history, store
from leaderboards.models import ArchivedStanding
from leaderboards.services import season_rebuild_standings
from matches.models import Player, PlayerTotal
from seasons.models import SortOrder
from tests.factories import SeasonFactory
from tests.leaderboards.closed_seasons import EXPECTED_ORDER, archive
from tests.sessions import database_session

pytestmark = pytest.mark.django_db


def _fetch(sql: str, params: list | None = None) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params or [])
        return cursor.fetchall()


def _partitions_of(season_id: int) -> list[tuple[str, str]]:
    """The archive's partitions holding the season: (name, bound)."""
    return _fetch(
        "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i"
        " JOIN pg_class c ON c.oid = i.inhrelid"
        " WHERE i.inhparent = 'seasons_archivedstanding'::regclass"
        " AND EXISTS (SELECT 1 FROM seasons_archivedstanding a"
        "             WHERE a.tableoid = c.oid AND a.season_id = %s)",
        [season_id],
    )


def _indexes_of(table: str) -> list[str]:
    rows = _fetch("SELECT indexname FROM pg_indexes WHERE tablename = %s", [table])
    return sorted(name for (name,) in rows)


def test_a_closed_season_is_archived_in_a_partition_of_its_own_with_the_archives_keys(ended):
    season = closing.season_close(season=ended)

    name = f"archive_season_{season.pk}"
    assert _partitions_of(season.pk) == [(name, f"FOR VALUES IN ('{season.pk}')")]
    assert _fetch(f"SELECT count(*) FROM {name}") == [(12,)]  # noqa: S608
    assert _indexes_of(name) == [
        f"{name}_pkey",
        f"{name}_unique_player",
        f"{name}_unique_rank",
    ]
    # each of them is the partition's part of one of the archive's own
    parents = _fetch(
        "SELECT p.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
        " JOIN pg_class p ON p.oid = i.inhparent WHERE c.relname LIKE %s ORDER BY 1",
        [f"{name}\\_%"],
    )
    assert [row[0] for row in parents] == [
        "archive_unique_player",
        "archive_unique_rank",
        "seasons_archivedstanding_pkey",
    ]
    assert [row[2] for row in archive(season)] == EXPECTED_ORDER


def test_a_snapshot_taken_again_replaces_the_seasons_partition(ended):
    # a corrupted set fails the first snapshot's check; the set is rebuilt and copied again
    store.write_standings([store.StandingWrite(ended.pk, "ghost", 2**52)])

    season = closing.season_close(season=ended)

    assert season.snapshot_attempts == 2
    assert _partitions_of(season.pk) == [
        (f"archive_season_{season.pk}", f"FOR VALUES IN ('{season.pk}')")
    ]
    assert [row[2] for row in archive(season)] == EXPECTED_ORDER


def test_rows_of_the_season_written_before_its_partition_are_replaced_by_the_close(ended):
    # an archive row written by hand, before the season had a partition: the default one holds it
    ArchivedStanding.objects.create(
        season=ended,
        rank=1,
        competition_rank=1,
        player_id="p11",
        points=1,
        reached_at=timezone.now(),
    )
    assert _partitions_of(ended.pk) == [("archive_other_seasons", "DEFAULT")]

    season = closing.season_close(season=ended)

    assert _partitions_of(season.pk) == [
        (f"archive_season_{season.pk}", f"FOR VALUES IN ('{season.pk}')")
    ]
    assert [row[2] for row in archive(season)] == EXPECTED_ORDER


def test_a_partition_a_crash_left_unattached_is_built_again_by_the_next_run(ended, monkeypatch):
    def crash(cursor, *, season_id):
        raise SystemExit("killed before the attach")

    monkeypatch.setattr(archive_partitions, "partition_attach", crash)
    with pytest.raises(SystemExit):
        closing.season_close(season=ended)
    name = f"archive_season_{ended.pk}"
    # built, never attached: the archive shows nothing of the season
    assert _fetch(f"SELECT count(*) FROM {name}") == [(12,)]  # noqa: S608
    assert ArchivedStanding.objects.filter(season=ended).count() == 0
    monkeypatch.undo()

    season = closing.season_close(season=ended)

    assert season.state == "closed"
    assert _partitions_of(season.pk) == [(name, f"FOR VALUES IN ('{season.pk}')")]
    assert [row[2] for row in archive(season)] == EXPECTED_ORDER


def _read_altered(monkeypatch, alter) -> None:
    """The set's rows read by the close changed by `alter` on the way (as a fault in the
    reading of the set would), in pages of 5, so faults between pages are found too."""
    read = store.iter_ranked_rows

    def altered(season_id, *, page_size, shards):
        rows = alter([row for page in read(season_id, page_size=page_size, shards=shards)
                      for row in page])  # fmt: skip
        yield from (rows[start : start + 5] for start in range(0, len(rows), 5))

    monkeypatch.setattr(store, "iter_ranked_rows", altered)


def _checked(season, monkeypatch, alter=lambda rows: rows) -> dict[str, int]:
    """The close's snapshot and check of the season, its rows read through `alter`."""
    _read_altered(monkeypatch, alter)
    return closing._verify(closing._snapshot(season, None))


def _swapped(first: int, second: int):
    """The players (and their scores) at two places swap, the ranks stay."""

    def alter(rows):
        rows[first], rows[second] = (
            (*rows[first][:2], *rows[second][2:]),
            (*rows[second][:2], *rows[first][2:]),
        )
        return rows

    return alter


def test_the_check_passes_the_sets_own_order(ended, monkeypatch):
    assert _checked(ended, monkeypatch) == {}
    assert _fetch(f"SELECT count(*) FROM archive_season_{ended.pk}") == [(12,)]  # noqa: S608


@pytest.mark.parametrize("first", [1, 4])  # within a page; the last of one and the next's first
def test_the_check_finds_two_players_out_of_the_tie_rules_order(ended, monkeypatch, first):
    # p01 (99 points) and p02 (98) swap ranks 2 and 3 (p04 and p07, ranks 5 and 6): the first
    # now follows a player with fewer points
    assert _checked(ended, monkeypatch, _swapped(first, first + 1)) == {"wrong_ranks": 1}


def test_the_check_holds_equal_points_to_who_reached_them_first(ended, monkeypatch):
    # p06 and p05 have 5 points each, p06 reached them a second earlier: ranks 11 and 12
    assert _checked(ended, monkeypatch, _swapped(10, 11)) == {"wrong_ranks": 1}


def test_the_check_holds_equal_points_and_times_to_the_player_id_that_sorts_last(
    ended, monkeypatch
):
    p06 = PlayerTotal.objects.get(season=ended, player_id="p06")
    PlayerTotal.objects.filter(season=ended, player_id="p05").update(reached_at=p06.reached_at)
    season_rebuild_standings(season=ended)
    # the same second too: p06 still first, its id sorting after p05's
    assert _checked(ended, monkeypatch) == {}

    assert _checked(ended, monkeypatch, _swapped(10, 11)) == {"wrong_ranks": 1}


def test_the_check_finds_ranks_that_do_not_start_at_1_or_skip_one(ended, monkeypatch):
    def skipped(rows):
        rows[-1] = (13, *rows[-1][1:])  # the last rank skips 12
        return rows

    assert _checked(ended, monkeypatch, skipped) == {"wrong_ranks": 1}

    def from_0(rows):
        rows[0] = (0, *rows[0][1:])  # and the first is 0, so rank 2 no longer follows it either
        return skipped(rows)

    assert _checked(ended, monkeypatch, from_0) == {"wrong_ranks": 3}


def test_a_standing_is_archived_only_with_the_score_its_total_packs_to(ended, monkeypatch):
    # p03 a second later in the set than in PostgreSQL (its points the same): a stale time
    (composite,) = store.scores_of(ended.pk, ["p03"])
    store.compare_and_set(ended.pk, "p03", expected=composite, composite=composite - 1)

    problems = _checked(ended, monkeypatch)

    assert problems == {"standings_not_in_totals": 1, "totals_not_in_standings": 1}
    copied = _fetch(f"SELECT player_id FROM archive_season_{ended.pk}")  # noqa: S608
    assert sorted(player for (player,) in copied) == sorted(set(EXPECTED_ORDER) - {"p03"})


def test_the_check_follows_the_boards_way_of_ranking_points(ended, monkeypatch):
    # the set as a highest-first board packs it, checked as a lowest-first board's: no total
    # packs to its standing's composite
    ended.board.sort_order = SortOrder.LOWEST_FIRST
    ended.board.save(update_fields=["sort_order"])

    problems = _checked(ended, monkeypatch)

    assert problems == {"standings_not_in_totals": 12, "totals_not_in_standings": 12}


def test_a_player_twice_in_the_set_is_found(ended, monkeypatch):
    def twice(rows):
        return [*rows, (13, 12, *rows[-1][2:])]

    problems = _checked(ended, monkeypatch, twice)

    # archived twice: one total more than PostgreSQL has, and out of the set's order
    assert problems == {"totals_not_in_standings": -1, "wrong_ranks": 1}


def test_a_player_in_the_place_of_another_is_found_by_the_order_alone(ended, monkeypatch):
    def copied_down(rows):
        rows[6] = (rows[6][0], *rows[5][1:])  # p08 (rank 7) read as p07 again, its rank kept
        return rows

    # p07 archived twice and p08 not at all: as many archived as copied and as totals
    assert _checked(ended, monkeypatch, copied_down) == {"wrong_ranks": 1}


def test_a_banned_player_left_in_the_set_is_not_archived(ended, monkeypatch):
    # banned in PostgreSQL, its set not told (the close repairs bans before its snapshot; this
    # snapshot is taken without that)
    Player.objects.filter(player_id="p03").update(banned_at=timezone.now())

    problems = _checked(ended, monkeypatch)

    assert problems == {"standings_not_in_totals": 1}
    copied = _fetch(f"SELECT player_id FROM archive_season_{ended.pk}")  # noqa: S608
    assert "p03" not in {player for (player,) in copied}


def test_a_close_records_its_archives_size_only_once_checked(ended, monkeypatch):
    _read_altered(monkeypatch, _swapped(0, 1))
    with pytest.raises(closing.StandingsMismatch):
        closing.season_close(season=ended)
    ended.refresh_from_db()
    assert ended.archived_players is None
    monkeypatch.undo()

    season = closing.season_close(season=ended)

    assert season.archived_players == 12


def test_a_member_that_is_no_player_id_is_copied_escaped_and_caught(ended):
    # a set Redis corrupted: a member with a tab, which COPY's text would take as two columns
    store.write_standings([store.StandingWrite(ended.pk, "p\t99", 2**52)])

    season = closing.season_close(season=ended)

    # copied escaped, found by the check, the set rebuilt from PostgreSQL and copied again
    assert season.snapshot_attempts == 2
    assert [row[2] for row in archive(season)] == EXPECTED_ORDER


def test_a_snapshot_that_fails_its_check_is_never_indexed_nor_attached(ended, monkeypatch):
    # every snapshot out of order (a fault in the reading of the set), rebuilt or not
    _read_altered(monkeypatch, _swapped(0, 1))

    with pytest.raises(closing.StandingsMismatch, match="wrong_ranks"):
        closing.season_close(season=ended)

    name = f"archive_season_{ended.pk}"
    assert _fetch(f"SELECT count(*) FROM {name}") == [(12,)]  # noqa: S608
    assert _indexes_of(name) == []
    assert _partitions_of(ended.pk) == []
    assert ArchivedStanding.objects.filter(season=ended).count() == 0
    ended.refresh_from_db()
    assert ended.state == "closing"
    assert ended.snapshot_attempts == closing.MAX_SNAPSHOT_ATTEMPTS


def test_a_players_history_across_seasons_is_read_through_the_player_key(ended):
    season = closing.season_close(season=ended)

    # (the tables of a test are a few rows, read whole: the plan at scale is the indexes')
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
    plan = history._history_rows("p03").explain()

    assert f"archive_season_{season.pk}_unique_player" in plan
    assert "Seq Scan on archive_" not in plan
    assert [past["final_rank"] for past in history.player_history(player_id="p03")] == [4]


@pytest.mark.parametrize(("server", "building"), [("64MB", "512MB"), ("1GB", "1GB")])
def test_index_builds_get_at_least_512mb_of_sort_memory_never_less_than_the_server_gives(
    season, server, building
):
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL maintenance_work_mem = %s", [server])
        name = archive_partitions.partition_create(cursor, season_id=season.pk)
        archive_partitions.partition_index(cursor, name=name)
        cursor.execute("SHOW maintenance_work_mem")
        assert cursor.fetchone() == (building,)


def _reader() -> psycopg.Connection:
    """Another session of the test database, as a long read of the archive would hold one."""
    return database_session(connection.settings_dict["NAME"])


def test_dropping_an_earlier_copy_gives_up_on_a_long_read_of_the_archive(
    transactional_db, monkeypatch
):
    # given: a season's copy attached to the archive, and a read of the archive under way
    season = SeasonFactory()
    with transaction.atomic(), connection.cursor() as cursor:
        name = archive_partitions.partition_create(cursor, season_id=season.pk)
        archive_partitions.partition_index(cursor, name=name)
    with transaction.atomic(), connection.cursor() as cursor:
        archive_partitions.partition_attach(cursor, season_id=season.pk)
    monkeypatch.setattr(archive_partitions, "DROP_LOCK_WAIT", "200ms")
    with _reader() as reader:
        reader.execute("SELECT count(*) FROM seasons_archivedstanding").fetchone()

        # when: the close drops that copy to take another, the read still open
        with (
            pytest.raises(OperationalError, match="lock timeout"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            archive_partitions.partition_drop(cursor, season_id=season.pk)

        # then: the copy is still there, and the read went on
        assert reader.execute(f"SELECT count(*) FROM {name}").fetchone() == (0,)  # noqa: S608
    # and once the read is over, the drop goes through
    with transaction.atomic(), connection.cursor() as cursor:
        archive_partitions.partition_drop(cursor, season_id=season.pk)
    assert _fetch("SELECT to_regclass(%s)", [name]) == [(None,)]
