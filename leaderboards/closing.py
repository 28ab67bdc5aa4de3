"""Closing a season: freeze it, archive its final standings, check them, award rewards.

Every step is idempotent and records its progress on the season, so a run killed at any step
is finished by the next one without duplicating or losing a row:

1. closing     the season stops taking results (writers hold a share lock on the season row,
               so this waits for in-flight results and no new one starts)
2. mirrored    every committed total of the season is in its ZSET, and the players it holds off
               as banned are the ones PostgreSQL has banned (refreshes still owed applied, any
               other difference repaired), so a lost ban refresh cannot fail the check below
3. snapshotted the ZSET, paged by rank, is copied into the season's own partition of the
               archive (replacing any earlier copy), each standing joined to its total
4. verified   the copy is checked against PostgreSQL's totals: the same players, each standing
               the composite its total packs to (points and time), ranks in the set's order,
               which is then the tie rule's; otherwise the ZSET is rebuilt and snapshotted
               again; the checked partition is indexed and attached to the archive;
               then each player's rank within each segment of the board and within their
               clan is archived too, in the archive's order, by the segment values and clan
               the players have now, and the clan board from the archived points
5. rewarded    reward tiers are applied to the archive (and segment tiers to the segments'
               ranks), never to the live key (rewards.py)
6. closed      done, and in the same transaction the webhooks are told: `season.closed` with
               the archive's summary, and the rewards in `rewards.granted` pages; the Redis
               key is kept for the board's retention days, then unlinked
"""

from __future__ import annotations

import logging
import operator
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from itertools import compress
from typing import Any, NamedTuple

from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from config.building_blocks.errors import Conflict
from seasons.locks import SeasonBusy, season_job
from seasons.models import MAX_SEASON_SECONDS, Season, SeasonState
from seasons.scoring import composite_sql
from seasons.services import season_create
from webhooks.models import EventType
from webhooks.services import webhook_event_emit

from . import archive_partitions, live, store
from .archive_rules import ARCHIVE_TABLES, clans_rank, segments_rank
from .models import ArchivedStanding
from .player_refreshes import season_bans_repair
from .rewards import season_rewards_announce, season_rewards_award
from .services import season_rebuild_standings, totals_mirror_pending

logger = logging.getLogger(__name__)

SNAPSHOT_PAGE = 1000
MAX_SNAPSHOT_ATTEMPTS = 2

Progress = Callable[[str, int, int], None]


class StandingsMismatch(Exception):
    """The archived snapshot disagrees with PostgreSQL even after a rebuild."""


def _step(season: Season, step: str, since: float, **fields: object) -> float:
    """Record the step reached; logs how long it took since `since` (a monotonic clock's
    reading, returned anew), so an operator sees where a large season's close spends its time."""
    Season.objects.filter(pk=season.pk).update(close_step=step, **fields)
    season.close_step = step
    for name, value in fields.items():
        setattr(season, name, value)
    now = time.monotonic()
    logger.info("season %s: %s in %.1f s", season.pk, step, now - since)
    return now


def season_close(
    *,
    season: Season,
    force: bool = False,
    now: datetime | None = None,
    on_progress: Progress | None = None,
) -> Season:
    """Close a season (or finish closing it). `force` closes before the grace period is over.

    One runner per season: while another worker closes or rebuilds it, raises SeasonBusy.
    """
    now = now or timezone.now()
    with season_job(season.pk):
        return _season_close(season=season, force=force, now=now, on_progress=on_progress)


def _season_close(
    *, season: Season, force: bool, now: datetime, on_progress: Progress | None
) -> Season:
    with transaction.atomic():
        season = Season.objects.select_for_update().select_related("board").get(pk=season.pk)
        if season.state == SeasonState.CLOSED:
            return season
        if not force and now < season.accepts_until:
            raise Conflict(
                f"Season '{season.slug}' takes late results until "
                f"{season.accepts_until.isoformat()}.",
                code="season_not_over",
            )
        if season.state == SeasonState.OPEN:
            season.state = SeasonState.CLOSING
            season.close_started_at = now
            season.close_step = "closing"
            season.save(update_fields=["state", "close_started_at", "close_step"])
            if force and now < season.ends_at:
                _reset_now(season, now)

    clock = time.monotonic()
    _mirror_pending(season)
    _bans_repair(season)
    clock = _step(season, "mirrored", clock)

    for attempt in range(1, MAX_SNAPSHOT_ATTEMPTS + 1):
        Season.objects.filter(pk=season.pk).update(snapshot_attempts=F("snapshot_attempts") + 1)
        snapshot = _snapshot(season, on_progress)
        clock = _step(season, "snapshotted", clock)
        problems = _verify(snapshot)
        if not problems:
            break
        logger.error(
            "season %s snapshot %d disagrees with PostgreSQL: %s; rebuilding",
            season.pk,
            attempt,
            problems,
        )
        season_rebuild_standings(season=season)
    else:
        raise StandingsMismatch(f"season {season.pk}: {problems}")
    _attach(season)
    _segments_archive(season)
    _clans_archive(season)
    # The archive's size once it holds the season (rewards by top percentage read it).
    clock = _step(season, "verified", clock, archived_players=snapshot.archived)

    awarded = season_rewards_award(season=season, now=now)
    _step(season, "rewarded", clock)
    logger.info("season %s: %d players archived, %d rewards", season.pk, snapshot.archived, awarded)

    with transaction.atomic():
        Season.objects.filter(pk=season.pk).update(
            state=SeasonState.CLOSED, close_step="closed", closed_at=now
        )
        season.refresh_from_db()
        _closed_announce(season)
    live.season_closed(season.pk, live.next_season_slug(season))
    return season


# Archived players named in `season.closed`.
CLOSED_TOP = 3


def _closed_announce(season: Season) -> None:
    """The webhooks' `season.closed` (the archive's summary) and `rewards.granted` pages, in the
    transaction that closes the season: told once, and only once the rewards are final."""
    top = ArchivedStanding.objects.filter(season=season).order_by("rank")[:CLOSED_TOP]
    webhook_event_emit(
        event_type=EventType.SEASON_CLOSED,
        data={
            "board": season.board.slug,
            "season": season.slug,
            "season_id": season.pk,
            "starts_at": season.starts_at.isoformat(),
            "ends_at": season.ends_at.isoformat(),
            "closed_at": season.closed_at.isoformat(),
            "archive": {
                "players": season.archived_players or 0,
                "top": [
                    {"rank": row.rank, "player_id": row.player_id, "points": row.points}
                    for row in top
                ],
                "rewards": season.rewards.count(),
            },
        },
        board=season.board,
    )
    season_rewards_announce(season=season)


def _mirror_pending(season: Season) -> None:
    """Every standing of the season still in the mirror's outbox goes to its ZSET now."""
    while totals_mirror_pending(season=season, older_than=timedelta(0)):
        pass


def _bans_repair(season: Season) -> None:
    """The players held off the season's board are PostgreSQL's banned ones: a ban, an unban or
    an expired ban whose refresh is still owed, or was lost with Redis, is applied now."""
    repaired = season_bans_repair(season=season)
    if repaired:
        logger.info(
            "season %s: the bans of %d players refreshed before closing", season.pk, repaired
        )


# The ZSET is copied as it is into a temporary table (no WAL, no index), then into the season's
# own partition of the archive in one statement that joins each standing to its player's total:
# only a standing whose composite is the one the total packs to (the same points, reached in the
# same second) is archived, with the total's exact time (the ZSET holds whole seconds). So the
# check of the players is a count, not a second read of the season (_verify). The partition is
# indexed and attached only once the check passed (archive_partitions.py). The copy goes as
# COPY's text, a page at a time, written from the rows as they are read: a player id holds no
# tab, newline or backslash (its check constraint), and a page that does is written escaped
# (_copy_page).
_SNAPSHOT_TABLE = """
    CREATE TEMPORARY TABLE close_snapshot (
        rank integer, competition_rank integer, player_id text, composite bigint
    ) ON COMMIT DROP
"""
# One snapshot row as COPY's text (printf-style: the cheapest per row, at 100 million of them).
_COPY_ROW = "%d\t%d\t%s\t%d\n"
# The totals the close archives: those of the players not banned, as the set holds them once
# the bans are repaired.
_TOTALS_ARCHIVED = """
    SELECT player_id, points, reached_at FROM matches_playertotal pt
    WHERE season_id = %(season)s AND NOT EXISTS (
        SELECT 1 FROM matches_player p
        WHERE p.player_id = pt.player_id AND p.banned_at IS NOT NULL)
"""
_TOTAL_COMPOSITE = composite_sql(
    points="t.points",
    reached_at="t.reached_at",
    starts_at="%(starts_at)s",
    lowest_first="%(lowest_first)s",
)
# One statement, so the standings archived and the totals counted are of one moment: a ban
# between two statements could leave out one player and let in another, and the counts agree.
_ARCHIVE_FROM_SNAPSHOT = f"""
    WITH archived AS (
        INSERT INTO {{partition}} (season_id, rank, competition_rank, player_id, points, reached_at)
        SELECT %(season)s, s.rank, s.competition_rank, s.player_id, t.points, t.reached_at
        FROM close_snapshot s
        JOIN ({_TOTALS_ARCHIVED}) t
            ON t.player_id = s.player_id AND {_TOTAL_COMPOSITE} = s.composite
        RETURNING NULL
    )
    SELECT (SELECT count(*) FROM archived), (SELECT count(*) FROM ({_TOTALS_ARCHIVED}) t)
"""


class Snapshot(NamedTuple):
    """What a snapshot copied: standings read from the set, those archived (their total packs
    to their composite), the season's totals to archive at that moment, and faults of the
    ranks' order (_out_of_order)."""

    copied: int
    archived: int
    totals: int
    out_of_order: int


def _copy_page(copy: Any, page: list[store.RankedRow]) -> None:
    """A page of the snapshot as one COPY text; a page holding a member that is no player id (a
    tab, newline or backslash in it: a set Redis corrupted) goes row by row, escaped, for the
    check to find it."""
    text = "".join([_COPY_ROW % row for row in page])
    if text.count("\t") == 3 * len(page) and text.count("\n") == len(page) and "\\" not in text:
        copy.write(text)
        return
    for row in page:
        copy.write_row(row)


def _out_of_order(page: list[store.RankedRow], before: store.RankedRow | None) -> int:
    """Faults of the page's rows against the row before each: a rank that is not the one before
    it plus 1 (the first, 1), a row not after it in the set's order (the larger composite
    first; of equal ones, the player id that sorts last, byte by byte as Python compares an
    ASCII id). The archive's ranks are these rows', so with each total packing to its
    composite (the join above) they are in the tie rule's order (archive_rules.final_order_sql).
    Column by column over the page: about 0.1 s a million rows."""
    rows = page if before is None else [before, *page]
    ranks = [row[0] for row in rows]
    composites = [row[3] for row in rows]
    wrong = int(before is None and ranks[0] != 1)
    if ranks != list(range(ranks[0], ranks[0] + len(ranks))):
        wrong += sum(map(operator.ne, ranks[1:], [rank + 1 for rank in ranks[:-1]]))
    wrong += sum(map(operator.lt, composites, composites[1:]))
    for i in compress(range(len(rows) - 1), map(operator.eq, composites, composites[1:])):
        wrong += rows[i][2] <= rows[i + 1][2]
    return wrong


def _snapshot(season: Season, on_progress: Progress | None) -> Snapshot:
    """Copy the ZSET, by rank in pages, into the season's partition of the archive (bare, not
    attached yet), each standing joined to its player's total. An earlier copy is dropped
    first; the new one is attached whole, once checked (_attach), so a crash here leaves either
    no copy or a whole one (a partition never attached is dropped by the next run)."""
    expected = store.board_size(season.pk, shards=season.shards)
    copied = out_of_order = 0
    before: store.RankedRow | None = None
    with transaction.atomic(), connection.cursor() as cursor:
        archive_partitions.partition_drop(cursor, season_id=season.pk)
        partition = archive_partitions.partition_create(cursor, season_id=season.pk)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(_SNAPSHOT_TABLE)
        with cursor.cursor.copy(
            "COPY close_snapshot (rank, competition_rank, player_id, composite) FROM STDIN"
        ) as copy:
            for page in store.iter_ranked_rows(
                season.pk, page_size=SNAPSHOT_PAGE, shards=season.shards
            ):
                _copy_page(copy, page)
                out_of_order += _out_of_order(page, before)
                before = page[-1]
                copied += len(page)
                if on_progress is not None:
                    on_progress("snapshot", copied, expected)
        cursor.execute(
            _ARCHIVE_FROM_SNAPSHOT.format(partition=partition),
            {
                "season": season.pk,
                "lowest_first": season.board.lowest_first,
                "starts_at": season.starts_at,
            },
        )
        archived, totals = cursor.fetchone()
        # Dropped here too: inside an outer transaction (a test's) the commit is not this one's.
        cursor.execute("DROP TABLE close_snapshot")
    return Snapshot(copied=copied, archived=archived, totals=totals, out_of_order=out_of_order)


def _verify(snapshot: Snapshot) -> dict[str, int]:
    """Where the snapshot disagrees with PostgreSQL's totals (empty when they agree). A player
    twice in the set is archived twice: `totals_not_in_standings` below zero."""
    problems = {
        # A member with no total, or a score its total does not pack to (points or time).
        "standings_not_in_totals": snapshot.copied - snapshot.archived,
        "totals_not_in_standings": snapshot.totals - snapshot.archived,
        "wrong_ranks": snapshot.out_of_order,
    }
    return {name: count for name, count in problems.items() if count}


def _attach(season: Season) -> None:
    """The checked partition gets the archive's keys and statistics (no lock on the archive),
    then joins it (archive_partitions.py)."""
    with transaction.atomic(), connection.cursor() as cursor:
        archive_partitions.partition_index(
            cursor, name=archive_partitions.partition_name(season.pk)
        )
    with transaction.atomic(), connection.cursor() as cursor:
        archive_partitions.partition_attach(cursor, season_id=season.pk)


def _segments_archive(season: Season) -> int:
    """Each archived player's final rank within each segment of the board (the segment values
    they have at the close, which are the ones their live segment sets held), in the archive's
    order; one transaction replaces an earlier copy. Returns how many rows it wrote."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM leaderboards_archivedsegmentstanding WHERE season_id = %s", [season.pk]
        )
        return segments_rank(cursor, season=season, tables=ARCHIVE_TABLES)


def _clans_archive(season: Season) -> int:
    """The season's final clan board (leaderboards.models.ArchivedClanStanding), by the clans
    the archived players are in at the close; one transaction replaces an earlier copy."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM leaderboards_archivedclanstanding WHERE season_id = %s", [season.pk]
        )
        return clans_rank(cursor, season=season, tables=ARCHIVE_TABLES)


def _reset_now(season: Season, now: datetime) -> None:
    """ "Close now" before the season's end is a reset: the season ends now, with no grace (a
    result that ended before this moment and arrives later is refused as `season_closed`, as
    for any closed season), and the board's next season starts now, so a result that ends
    from now on has a home at once.

    The next season is moved to start now when it has no result yet and its window still fits
    a season's length; otherwise a season of its own bridges the gap until it starts. A board
    without a next season takes no results until one is made. Runs in the close's first
    transaction, with the season's row locked."""
    following = (
        Season.objects.select_for_update()
        .filter(board_id=season.board_id, starts_at__gte=season.ends_at)
        .order_by("starts_at")
        .first()
    )
    gap_end = season.ends_at
    season.ends_at = now
    season.grace_period = timedelta(0)
    season.save(update_fields=["ends_at", "grace_period"])
    if following is None:
        return
    fits = (following.ends_at - now).total_seconds() <= MAX_SEASON_SECONDS
    if fits and following.starts_at == gap_end and not following.totals.exists():
        following.starts_at = now
        following.save(update_fields=["starts_at"])
        return
    season_create(
        board=season.board,
        slug=f"{season.slug}-reset-{now:%Y%m%d%H%M%S}",
        name=f"{season.name} (after the reset)",
        starts_at=now,
        ends_at=min(following.starts_at, now + timedelta(seconds=MAX_SEASON_SECONDS)),
        grace_period=season.board.season_grace_period,
    )


def seasons_close_due(*, now: datetime | None = None) -> list[int]:
    """Close every season whose grace period is over; returns the ids closed by this run.

    Each season on its own: one that fails (or that another worker is closing) does not hold
    back the others; the next run takes it up again where it stopped.
    """
    now = now or timezone.now()
    due = list(
        Season.objects.exclude(state=SeasonState.CLOSED)
        .filter(ends_at__lte=now - F("grace_period"))
        .order_by("ends_at")
        .values_list("id", flat=True)
    )
    closed = []
    for season_id in due:
        try:
            season_close(season=Season.objects.get(pk=season_id), now=now)
        except SeasonBusy:
            logger.info("season %s is being closed by another worker", season_id)
        except Exception:
            logger.exception("closing season %s failed; the next run resumes it", season_id)
        else:
            closed.append(season_id)
    return closed


def closed_standings_remove_expired(*, now: datetime | None = None) -> int:
    """UNLINK the Redis keys of seasons closed longer ago than their board keeps them."""
    now = now or timezone.now()
    removed = 0
    seasons = Season.objects.filter(
        state=SeasonState.CLOSED, standings_removed_at__isnull=True, closed_at__isnull=False
    ).select_related("board")
    for season in seasons:
        if season.closed_at + timedelta(days=season.board.keep_closed_standings_days) <= now:
            store.delete_standings(season.pk, shards=season.shards)
            Season.objects.filter(pk=season.pk).update(standings_removed_at=now)
            removed += 1
    return removed
