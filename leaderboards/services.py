"""Writes to the Redis mirror: mirror committed standings, sweep what was missed, rebuild a season.

PostgreSQL is the truth; everything here can be repeated any number of times, in any order.
The write path hands the mirror the composite scores it committed (matches.outbox), so
mirroring is a script call per season and one DELETE of the outbox rows it wrote.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import connection, transaction
from django.utils import timezone

from audit.models import OperatorActionKind
from audit.services import operator_action_record
from matches.models import PendingStanding, Player, PlayerTotal
from matches.outbox import StandingChange
from seasons.locks import season_job
from seasons.models import Season, SeasonState
from seasons.scoring import composite_for, composite_sql

from . import live, store

logger = logging.getLogger(__name__)

REBUILD_CHUNK = 20000
# The sweep leaves younger outbox rows to the tasks already queued for them.
SWEEP_AFTER = timedelta(seconds=2)
SWEEP_LIMIT = 20000
# A season found lost is rebuilt once in this long, however many writes and runs find it so.
HEAL_CLAIM_SECONDS = 60


def standings_mirror(*, changes: Sequence[StandingChange]) -> int:
    """Write committed standings into their seasons' ZSETs, then drop their outbox rows.

    Seasons already closed are skipped (their archive is final); their rows are dropped all the
    same. Returns how many standings were written.
    """
    if not changes:
        return 0
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, shards FROM seasons_season WHERE id = ANY(%s) AND state <> %s",
            [sorted({change.season_id for change in changes}), SeasonState.CLOSED],
        )
        shards_of_live = dict(cursor.fetchall())
    live_changes = [c for c in changes if c.season_id in shards_of_live]
    mirrored = store.mirror_standings(
        store.StandingWrite(
            season_id=c.season_id,
            player_id=c.player_id,
            composite=c.composite,
            worsening=c.worsening,
            shards=shards_of_live[c.season_id],
        )
        for c in live_changes
    )
    _seasons_not_whole(mirrored.not_whole)
    if live_changes:
        players: dict[int, set[str]] = {}
        for change in live_changes:
            players.setdefault(change.season_id, set()).add(change.player_id)
        live.standings_changed(players, players)
    # Only after Redis has them: a crash before this leaves the rows for a redelivery or the
    # sweep, and writing them twice changes nothing.
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM matches_pendingstanding WHERE id = ANY(%s)",
            [sorted(c.pending_id for c in changes)],
        )
    return mirrored.written


def _seasons_not_whole(not_whole: dict[int, store.NotWhole]) -> None:
    """Seasons the mirror wrote whose sets are not marked whole (store.py, "Whole standings").
    One never marked is new (or from before the marker): it is marked now. One marked before
    lost its set with its Redis: it is rebuilt, and reads answer 503 meanwhile."""
    for season_id, found in not_whole.items():
        if not season_standings_mark_first(
            season_id=season_id, shards=found.shards, present=found.written
        ):
            season_heal_queue(season_id=season_id)


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
        season_heal_queue(season_id=season_id)
    return True


def season_heal_queue(*, season_id: int) -> None:
    """Queue the rebuild of a season whose standings Redis lost, once a while (the mirror finds
    it at every write)."""
    if not store.heal_claim(season_id, seconds=HEAL_CLAIM_SECONDS):
        return
    logger.warning("season %s lost its standings in Redis; rebuilding them", season_id)
    from .tasks import heal_season  # the tasks module imports this one

    try:
        heal_season.apply_async((season_id,), retry=False)
    except Exception:
        # The broker is away: reconciliation's next run rebuilds it instead.
        logger.warning("could not queue the rebuild of season %s", season_id, exc_info=True)


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
    worker or its broker, a Redis outage). Returns how many outbox rows it handled."""
    pending = PendingStanding.objects.filter(changed_at__lt=timezone.now() - older_than)
    if season is not None:
        pending = pending.filter(season=season)
    rows = list(pending.select_related("season__board").order_by("id")[:limit])
    if not rows:
        return 0
    # A ban whose refresh task was lost too: the sweep checks PostgreSQL, since the banned
    # players Redis remembers are only as good as that task.
    banned = set(
        Player.objects.filter(
            player_id__in={row.player_id for row in rows}, banned_at__isnull=False
        ).values_list("player_id", flat=True)
    )
    for player_id in banned:
        store.players_ban(
            {row.season_id: row.season.shards for row in rows if row.player_id == player_id},
            player_id,
        )
    standings_mirror(
        changes=[
            StandingChange(
                row.pk,
                row.season_id,
                row.player_id,
                row.composite,
                row.season.board.standings_worsen,
            )
            for row in rows
        ]
    )
    logger.info("sweep mirrored %d pending standings", len(rows))
    return len(rows)


def mirror_lag_seconds(*, now: datetime | None = None) -> float:
    """Age of the oldest committed standing not yet mirrored (0 when the mirror is caught up)."""
    oldest = PendingStanding.objects.order_by("id").values_list("changed_at", flat=True).first()
    if oldest is None:
        return 0.0
    return max(0.0, ((now or timezone.now()) - oldest).total_seconds())


def _season_composites(season: Season) -> Iterator[list[tuple[str, int]]]:
    """Every player's composite score in the season, computed by PostgreSQL, in chunks.

    The arithmetic is seasons.scoring's, rendered into SQL, so ten million rows never pass
    through Python objects one by one. Rows come best first: Redis inserts each new lowest
    score next to the skiplist's head, which made building a large board about twice as fast
    as inserting in table order (measured on 2 million players).
    """
    board = season.board
    composite = composite_sql(
        points="points",
        reached_at="reached_at",
        starts_at="%s",
        lowest_first="TRUE" if board.lowest_first else "FALSE",
    )
    with transaction.atomic(), connection.chunked_cursor() as cursor:
        cursor.execute(
            f"""
            SELECT player_id, {composite}
            FROM matches_playertotal t
            WHERE season_id = %s AND NOT EXISTS (
                SELECT 1 FROM matches_player p
                WHERE p.player_id = t.player_id AND p.banned_at IS NOT NULL)
            ORDER BY 2 DESC
            """,  # noqa: S608 - the expression comes from fixed constants
            [season.starts_at, season.id],
        )
        while True:
            rows = cursor.fetchmany(REBUILD_CHUNK)
            if not rows:
                return
            yield rows


def season_rebuild_standings(
    *, season: Season, on_progress: Callable[[int], None] | None = None
) -> int:
    """Rebuild a season's ZSET from PostgreSQL and swap it in atomically; returns its size.
    One runner per season: raises SeasonBusy while another worker closes or rebuilds it."""
    with season_job(season.pk):
        size = store.rebuild_standings(
            season.id,
            lambda: _season_composites(season),
            worsening=season.board.standings_worsen,
            on_chunk=on_progress,
            shards=season.shards,
        )
    # Built from PostgreSQL, so whole: a later loss of it is found, even if it was never
    # marked before.
    Season.objects.filter(pk=season.pk, standings_whole_since__isnull=True).update(
        standings_whole_since=timezone.now()
    )
    live.standings_changed([season.id])
    logger.info("rebuilt season %s: %d players", season.pk, size)
    return size


def season_rebuild_by_operator(
    *,
    season: Season,
    actor: AbstractBaseUser | None,
    on_progress: Callable[[int], None] | None = None,
) -> int:
    """An operator's rebuild (the admin's action, `manage.py rebuild_leaderboard`), recorded in
    the audit log once done; `actor` None is a command line. A close's own rebuild is not."""
    size = season_rebuild_standings(season=season, on_progress=on_progress)
    operator_action_record(
        actor=actor,
        action=OperatorActionKind.REBUILD,
        board=season.board.slug,
        season=season.slug,
        details={"players": size},
    )
    return size


def player_standings_refresh(*, player_id: str) -> int:
    """After a ban or an unban: take the player off every live board, or put them back exactly
    as PostgreSQL has them. Returns how many seasons were touched."""
    totals = list(
        PlayerTotal.objects.filter(player_id=player_id)
        .exclude(season__state=SeasonState.CLOSED)
        .select_related("season__board", "player")
    )
    if not totals:
        return 0
    season_ids = [total.season_id for total in totals]
    seasons = {total.season_id: total.season.shards for total in totals}
    if totals[0].player.banned_at_time(timezone.now()):
        store.players_ban(seasons, player_id)
        return len(totals)
    store.players_unban(seasons, player_id)
    store.write_standings(
        store.StandingWrite(
            season_id=total.season_id,
            player_id=player_id,
            composite=composite_for(
                points=total.points,
                reached_at=total.reached_at,
                season_starts_at=total.season.starts_at,
                lowest_first=total.season.board.lowest_first,
            ),
            worsening=total.season.board.standings_worsen,
            shards=total.season.shards,
        )
        for total in totals
    )
    live.standings_changed(season_ids)
    return len(totals)


def player_standing_correct(*, season_id: int, player_id: str) -> bool:
    """After a correction (a voided result): set the player's entry in the season's live board to
    exactly what PostgreSQL has now (off the board if no total is left), whichever way it moves.
    A closed season's board is left as archived. Returns whether an entry was written."""
    season = Season.objects.select_related("board").get(pk=season_id)
    if season.state == SeasonState.CLOSED:
        return False
    total = PlayerTotal.objects.filter(season_id=season_id, player_id=player_id).first()
    composite = (
        None
        if total is None
        else composite_for(
            points=total.points,
            reached_at=total.reached_at,
            season_starts_at=season.starts_at,
            lowest_first=season.board.lowest_first,
        )
    )
    written = store.standing_correct(season_id, player_id, composite, shards=season.shards)
    live.standings_changed([season_id])
    return written
