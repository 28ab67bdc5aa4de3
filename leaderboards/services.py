"""Writes to the Redis mirror: mirror committed standings, sweep what was missed, rebuild a season.

PostgreSQL is the truth; everything here can be repeated any number of times, in any order.
The write path hands the mirror the composite scores it committed (matches.outbox), so
mirroring is a script call per season and one DELETE of the outbox rows it wrote.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import connection, transaction
from django.db.models import Min, QuerySet
from django.utils import timezone

from audit.models import OperatorActionKind
from audit.services import operator_action_record
from config.building_blocks.caching import RecentAnswers
from matches.models import Clan, PendingStanding
from matches.outbox import StandingChange
from seasons.locks import season_job
from seasons.models import Season, SeasonState

from . import heals, live, store
from .player_refreshes import players_refresh_owed, season_bans_repair
from .segments import segment_entries_by_season
from .snapshots import rebuilt_segmented, season_composites
from .thresholds import crossings_announce, thresholds_wanted

logger = logging.getLogger(__name__)

# The sweep leaves younger outbox rows to the tasks already queued for them.
SWEEP_AFTER = timedelta(seconds=2)
SWEEP_LIMIT = 20000
# Outbox rows read at a time (each holds one write's standings, up to a batch's).
SWEEP_ROWS_PAGE = 100


def standings_mirror(*, changes: Sequence[StandingChange]) -> int:
    """Write committed standings into their seasons' ZSETs, then drop their outbox rows.

    Seasons already closed are skipped (their archive is final); their rows are dropped all the
    same. Returns how many standings were written.
    """
    if not changes:
        return 0
    live_seasons, clans_exist = _live_seasons({c.season_id for c in changes})
    live_changes = [c for c in changes if c.season_id in live_seasons]
    # Players' segment values and clan are read from PostgreSQL only for those Redis does not
    # hold yet (their first standing in the season): a change of them reaches Redis through
    # the refresh it owes (player_standings_refresh), never through the mirror.
    placed = {
        season_id: bool(season.board.segment_dimensions) or clans_exist
        for season_id, season in live_seasons.items()
    }

    def writes(
        changes: Sequence[StandingChange], entries: dict[int, dict[str, str]] | None
    ) -> list[store.StandingWrite]:
        return [
            store.StandingWrite(
                season_id=c.season_id,
                player_id=c.player_id,
                composite=c.composite,
                worsening=c.worsening,
                shards=live_seasons[c.season_id].shards,
                stamp=c.pending_id,
                segments=(
                    (store.UNREAD if placed[c.season_id] else "")
                    if entries is None
                    else entries[c.season_id].get(c.player_id, "")
                ),
            )
            for c in changes
        ]

    edges = thresholds_wanted(live_seasons.values())
    mirrored = store.mirror_standings(writes(live_changes, None), edges)
    moves = {season_id: list(moved) for season_id, moved in mirrored.moves.items()}
    if mirrored.unplaced:
        entries = segment_entries_by_season(
            {season_id: live_seasons[season_id].board for season_id in mirrored.unplaced},
            {player_id for players in mirrored.unplaced.values() for player_id in players},
        )
        placed_again = store.mirror_standings(
            writes(
                [
                    c
                    for c in live_changes
                    if entries.get(c.season_id, {}).get(c.player_id)
                    and c.player_id in mirrored.unplaced[c.season_id]
                ],
                entries,
            ),
            edges,
        )
        for season_id, moved in placed_again.moves.items():
            moves.setdefault(season_id, []).extend(moved)
        for season_id, crossed in placed_again.crossings.items():
            mirrored.crossings.setdefault(season_id, []).extend(crossed)
    _seasons_not_whole(mirrored.not_whole)
    if live_changes:
        players: dict[int, set[str]] = {}
        for change in live_changes:
            players.setdefault(change.season_id, set()).add(change.player_id)
        live.standings_changed(players, players, moves=moves)
    # Only after Redis has them: a crash before this leaves the rows for a redelivery or the
    # sweep, and writing them twice changes nothing. The thresholds' events go in the same
    # transaction (a crash between the Redis write and this commit loses those events: a
    # second write of the same standings crosses nothing).
    with transaction.atomic(), connection.cursor() as cursor:
        crossings_announce(live_seasons, mirrored.crossings)
        cursor.execute(
            "DELETE FROM matches_pendingstanding WHERE id = ANY(%s)",
            [sorted({c.pending_id for c in changes})],
        )
    return mirrored.written


# Which seasons are still open, and whether any clan exists, asked on every call in one
# statement; the seasons' settings (their boards' rules, dimensions and thresholds) are reused for
# LEADERBOARD_SEASON_CACHE_SECONDS, as the write path reuses its boards. Building the two ORM
# queries this replaces was a third of the mirror's CPU at 6,000 results/s.
_LIVE_SQL = (
    f"SELECT ARRAY(SELECT id FROM {Season._meta.db_table} WHERE id = ANY(%s) AND state <> %s), "
    f"EXISTS (SELECT 1 FROM {Clan._meta.db_table})"
)
_season_settings: RecentAnswers[Season | None] = RecentAnswers(
    seconds=lambda: settings.LEADERBOARD_SEASON_CACHE_SECONDS, maxsize=lambda: 1024
)


def _live_seasons(season_ids: set[int]) -> tuple[dict[int, Season], bool]:
    with connection.cursor() as cursor:
        cursor.execute(_LIVE_SQL, [sorted(season_ids), SeasonState.CLOSED])
        open_ids, clans_exist = cursor.fetchone()
    seasons = {
        pk: _season_settings.get_or_build(pk, lambda pk=pk: _season_read(pk)) for pk in open_ids
    }
    return {pk: season for pk, season in seasons.items() if season is not None}, clans_exist


def _season_read(pk: int) -> Season | None:
    fields = ("slug", "shards", "board__slug", "board__segment_dimensions",
              "board__score_operator", "board__sort_order", "board__rank_thresholds")  # fmt: skip
    return Season.objects.select_related("board").only(*fields).filter(pk=pk).first()


def _seasons_not_whole(not_whole: dict[int, store.NotWhole]) -> None:
    """Seasons the mirror wrote whose sets are not marked whole (store.py, "Whole standings").
    One never marked is new (or from before the marker): it is marked now. One marked before
    lost its set with its Redis: it is rebuilt, and reads answer 503 meanwhile."""
    for season_id, found in not_whole.items():
        if not season_standings_mark_first(
            season_id=season_id, shards=found.shards, present=found.written
        ):
            heals.season_heal_queue(season_id=season_id)


def season_standings_mark_first(
    *, season_id: int, shards: int, present: dict[int, str] | None = None
) -> bool:
    """Mark a season's standings whole if they never were; False if they were marked before
    (so a missing marker means they were lost). Redis first, then PostgreSQL: a reader that
    finds the season marked in PostgreSQL finds its markers, and a crash in between leaves a
    season unmarked in PostgreSQL, which reconciliation marks. A shard that no longer holds the
    player seen there (`present`: lost since) is not marked, and the season is rebuilt."""
    if Season.objects.filter(pk=season_id, standings_whole_since__isnull=False).exists():
        return False
    marked = store.standings_mark_whole(season_id, shards=shards, present=present)
    Season.objects.filter(pk=season_id, standings_whole_since__isnull=True).update(
        standings_whole_since=timezone.now()
    )
    if not marked:
        heals.season_heal_queue(season_id=season_id)
    return True


def season_heal(*, season_id: int) -> int:
    """Rebuild a season's standings if Redis lost them (it is live and not marked whole);
    returns the players rebuilt (0: nothing to heal)."""
    season = Season.objects.select_related("board").get(pk=season_id)
    if season.state == SeasonState.CLOSED or store.standings_whole(season.pk, shards=season.shards):
        return 0
    size = season_rebuild_standings(season=season)
    store.heal_release(season.pk)
    return size


def totals_mirror_pending(
    *, limit: int = SWEEP_LIMIT, older_than: timedelta = SWEEP_AFTER, season: Season | None = None
) -> int:
    """The sweep: mirror standings committed but still in the outbox (a task lost with its
    worker or its broker, a Redis outage), about `limit` at most, whole outbox rows in the order
    they were written. With a season, the rows holding standings of it (and their other
    standings along). Returns how many standings it handled."""
    pending = PendingStanding.objects.filter(changed_at__lt=timezone.now() - older_than)
    if season is not None:
        pending = pending.filter(standings__has_key=str(season.pk))
    standings: list[tuple[int, int, str, int]] = []  # outbox row, season, player, composite
    for row in _in_pages(pending):
        standings.extend(
            (row.pk, season_id, player_id, composite)
            for season_id, players in row.season_standings().items()
            for player_id, composite in players
        )
        if len(standings) >= limit:
            break
    if not standings:
        return 0
    # A ban whose refresh task was lost too: applied first, so a banned player's standing is
    # not mirrored (through the bans' outbox, so it cannot undo a later unban's refresh).
    players_refresh_owed(player_ids={player_id for _, _, player_id, _ in standings})
    seasons = Season.objects.filter(pk__in={season_id for _, season_id, _, _ in standings})
    worsening = {
        season.pk: season.board.standings_worsen for season in seasons.select_related("board")
    }
    # A season gone since keeps no standings; its changes still carry their rows' ids, so the
    # mirror drops the rows.
    standings_mirror(
        changes=[
            StandingChange(row_id, season_id, player_id, composite, worsening.get(season_id, False))
            for row_id, season_id, player_id, composite in standings
        ]
    )
    logger.info("sweep mirrored %d pending standings", len(standings))
    return len(standings)


def _in_pages(pending: QuerySet[PendingStanding]) -> Iterator[PendingStanding]:
    """The outbox rows in the order they were written, read SWEEP_ROWS_PAGE at a time."""
    after = 0
    while rows := list(pending.filter(pk__gt=after).order_by("pk")[:SWEEP_ROWS_PAGE]):
        yield from rows
        after = rows[-1].pk


def mirror_lag_seconds(*, now: datetime | None = None) -> float:
    """Age of the oldest committed standing not yet mirrored (0 when the mirror is caught up)."""
    oldest = PendingStanding.objects.order_by("id").values_list("changed_at", flat=True).first()
    if oldest is None:
        return 0.0
    return max(0.0, ((now or timezone.now()) - oldest).total_seconds())


def season_rebuild_standings(
    *, season: Season, on_progress: Callable[[int], None] | None = None
) -> int:
    """Rebuild a season's ZSET from PostgreSQL and swap it in atomically; returns its size.
    A closed season's is rebuilt from its archive (its reads answer from the set while the
    board keeps it). One runner per season: raises SeasonBusy while another worker closes or
    rebuilds it."""
    with season_job(season.pk):
        started = timezone.now()
        # Read under the lock: a close that finished meanwhile has archived the season.
        closed = Season.objects.filter(pk=season.pk, state=SeasonState.CLOSED).exists()
        size = store.rebuild_standings(
            season.id,
            lambda: season_composites(season, from_archive=closed),
            worsening=season.board.standings_worsen,
            on_chunk=on_progress,
            shards=season.shards,
            segmented=rebuilt_segmented(season, closed),
        )
        if closed:
            # Its keys are back: removed again once the board's retention says so.
            Season.objects.filter(pk=season.pk).update(standings_removed_at=None)
        else:
            # The set was built without PostgreSQL's banned players, but the season's banned
            # players in Redis may be gone with the set (a Redis back empty): without them the
            # mirror would put a banned player's next result back on the board, and reads would
            # answer "not ranked" instead of "banned".
            season_bans_repair(season=season)
        # The swapped set holds every total committed before it began (read, or mirrored into
        # it meanwhile): reconciliation's recent pass need not look further back.
        season_checked_through(season=season, at=started)
    # Built from PostgreSQL, so whole: a later loss of it is found, even if it was never
    # marked before.
    Season.objects.filter(pk=season.pk, standings_whole_since__isnull=True).update(
        standings_whole_since=timezone.now()
    )
    live.standings_changed([season.id])
    logger.info("rebuilt season %s: %d players", season.pk, size)
    return size


def season_checked_through(*, season: Season, at: datetime) -> None:
    """Record in Redis, beside the season's sets, that they hold every total committed before
    `at` as PostgreSQL has it (store.checked_through): a set checked by reconciliation, or just
    rebuilt. Totals still in the mirror's outbox are not in Redis yet, so the point is moved back
    to the oldest of them: their writes come later, and a Redis that loses those must be
    re-checked from before them."""
    oldest = PendingStanding.objects.filter(standings__has_key=str(season.pk)).aggregate(
        at=Min("changed_at")
    )["at"]
    through = at if oldest is None else min(at, oldest)
    store.checked_through_set(season.pk, through.timestamp(), shards=season.shards)


def season_rebuild_by_operator(
    *,
    season: Season,
    actor: AbstractBaseUser | None,
    on_progress: Callable[[int], None] | None = None,
) -> int:
    """An operator's rebuild (the admin's action, `manage.py rebuild_leaderboard`), recorded in
    the audit log once done; `actor` None is a command line. A close's own rebuild is not."""
    size = season_rebuild_standings(season=season, on_progress=on_progress)
    closed = Season.objects.filter(pk=season.pk, state=SeasonState.CLOSED).exists()
    operator_action_record(
        actor=actor,
        action=OperatorActionKind.REBUILD,
        board=season.board.slug,
        season=season.slug,
        details={"players": size, "from": "archive"} if closed else {"players": size},
    )
    return size
