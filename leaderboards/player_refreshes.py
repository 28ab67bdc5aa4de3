"""Writes to the Redis mirror for one player at a time: the refresh a ban, an unban or new
segment values owe the player's live boards (through the bans' outbox, PendingPlayerRefresh),
its sweep, a close's repair of its season's banned players, and a void's correction of the
player's standing. Each reads PostgreSQL's state when it runs, so each may be repeated, and a
late one cannot undo a later change.
"""

from __future__ import annotations

import logging
from collections.abc import Collection

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from matches.models import PendingPlayerRefresh, Player, PlayerTotal
from seasons.models import Season, SeasonState
from seasons.scoring import composite_for

from . import live, store
from .segments import segment_entries, segment_entries_by_season

logger = logging.getLogger(__name__)

# Bans' refreshes one sweep applies at most (each is a few queries and one Redis round trip).
PLAYER_REFRESH_SWEEP_LIMIT = 1000


def player_standings_refresh(*, player_id: str) -> int:
    """After a ban, an unban or new segment values: take the player off every live board, or
    put them back exactly as PostgreSQL has them, in the segments PostgreSQL has them in, by the
    state PostgreSQL has now (so it may be repeated, and a late one cannot undo a later change).
    Returns how many seasons were touched."""
    # Taken before the totals are read: a correction stamped later may be missing from them,
    # and its value wins (see _standings_stamp).
    stamp = _standings_stamp()
    every_total = list(
        PlayerTotal.objects.filter(player_id=player_id).select_related("season__board", "player")
    )
    totals = [total for total in every_total if total.season.state != SeasonState.CLOSED]
    # A closed season's standings are its archive, which a ban no longer changes; but a player
    # banned while it ran is still marked banned in its keys, and once unbanned its reads
    # answer by the archive again (ranked there or not), never "banned". Only seasons whose keys
    # are still in Redis hold such a mark.
    closed = {
        t.season_id: t.season.shards
        for t in every_total
        if t.season.state == SeasonState.CLOSED and t.season.standings_removed_at is None
    }
    known = every_total[0].player if every_total else None
    player = known or Player.objects.filter(player_id=player_id).first()
    if player is None:
        return 0
    season_ids = [total.season_id for total in totals]
    seasons = {total.season_id: total.season.shards for total in totals}
    if player.banned_at_time(timezone.now()):
        store.players_ban(seasons, player_id)
        return len(totals)
    # Every live season: one whose last total of the player a void took while banned holds the
    # mark still, and would skip their next results.
    running = Season.objects.exclude(state=SeasonState.CLOSED).values_list("pk", "shards")
    store.players_unban({**dict(running), **closed}, player_id)
    if not totals:
        return 0
    entries = segment_entries_by_season(
        {total.season_id: total.season.board for total in totals}, [player_id]
    )
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
            stamp=stamp,
            segments=entries[total.season_id].get(player_id, ""),
        )
        for total in totals
    )
    live.standings_changed(season_ids)
    return len(totals)


def player_refresh_owed_apply(*, player_id: str, wait: bool = False) -> bool:
    """Apply the refresh a ban change owes the player's boards (matches.models.
    PendingPlayerRefresh), if still owed; returns whether one was applied.

    The row stays locked while the refresh runs and is deleted in the same transaction, after
    Redis holds the ban state: an error leaves it for the sweep, and a ban change committing
    meanwhile waits for the lock and then owes a refresh of its own. A row another worker is
    applying is skipped, unless `wait` (a close that needs it done)."""
    with transaction.atomic():
        owed = (
            PendingPlayerRefresh.objects.select_for_update(skip_locked=not wait)
            .filter(player_id=player_id)
            .first()
        )
        if owed is None:
            return False
        player_standings_refresh(player_id=player_id)
        owed.delete()
    return True


def players_refresh_owed(
    *, player_ids: Collection[str] | None = None, limit: int = PLAYER_REFRESH_SWEEP_LIMIT
) -> int:
    """The bans' sweep: apply the refreshes still owed (of these players only, with
    `player_ids`), oldest first; a lost task or a Redis error leaves them to the next run.
    Returns how many were applied."""
    owed = PendingPlayerRefresh.objects.order_by("requested_at")
    if player_ids is not None:
        owed = owed.filter(player_id__in=player_ids)
    applied = 0
    for player_id in owed.values_list("player_id", flat=True)[:limit]:
        try:
            applied += player_refresh_owed_apply(player_id=player_id)
        except (RedisConnectionError, RedisTimeoutError):
            # Redis is away: the others would fail alike; the next run tries again.
            logger.warning("could not refresh the boards of %s yet", player_id, exc_info=True)
            break
        except Exception:
            logger.exception(
                "refreshing the boards of %s failed; the next run tries again", player_id
            )
    return applied


def season_bans_repair(*, season: Season) -> int:
    """Make the banned players Redis holds off the season's board PostgreSQL's, for a close
    that must not depend on refreshes: the ones still owed for the season's players are
    applied now, and a difference owed none (a Redis restored from an older copy) is owed one
    and applied. Returns how many players were refreshed."""
    now = timezone.now()
    held_off = store.season_banned_players(season.pk, shards=season.shards)
    players = PlayerTotal.objects.filter(season=season)
    banned_now = Q(player__banned_at__isnull=False) & (
        Q(player__banned_until__isnull=True) | Q(player__banned_until__gt=now)
    )
    differing = set(players.filter(banned_now).values_list("player_id", flat=True)) ^ set(
        players.filter(player_id__in=held_off).values_list("player_id", flat=True)
    )
    # Upserted as a ban does, so a refresh running meanwhile is waited for, not undone.
    PendingPlayerRefresh.objects.bulk_create(
        [PendingPlayerRefresh(player_id=p, requested_at=now) for p in sorted(differing)],
        update_conflicts=True,
        unique_fields=["player"],
        update_fields=["requested_at"],
    )
    owed = PendingPlayerRefresh.objects.filter(player_id__in=players.values("player_id"))
    return sum(
        player_refresh_owed_apply(player_id=player_id, wait=True)
        for player_id in owed.order_by("player_id").values_list("player_id", flat=True)
    )


def _standings_stamp() -> int:
    """A stamp that orders a copy of standings against corrections: the next value of the
    outbox's id sequence, the clock every committed standing already carries (its outbox row's
    id, taken by the write path while it holds the season's row in share mode)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval(pg_get_serial_sequence('matches_pendingstanding', 'id'))")
        (stamp,) = cursor.fetchone()
    return int(stamp)


def player_standing_correct(*, season_id: int, player_id: str) -> bool:
    """After a correction (a voided result): set the player's entry in the season's live board to
    exactly what PostgreSQL has now (off the board if no total is left), whichever way it moves.
    A closed season's board is left as archived. Returns whether an entry was written.

    The season's row is held against writes (each result's transaction holds it in share mode)
    from the stamp to the Redis write, a few milliseconds: a standing committed before is in
    the total read and its outbox id is below the stamp, so its copies still on their way (an
    outbox row, a redelivered task, a rebuild's snapshot) are skipped by Redis; one committed
    after waits, gets an id above the stamp, and is mirrored over the correction as usual."""
    with transaction.atomic():
        season = (
            Season.objects.select_for_update(no_key=True, of=("self",))
            .select_related("board")
            .get(pk=season_id)
        )
        if season.state == SeasonState.CLOSED:
            return False
        stamp = _standings_stamp()
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
        entries = segment_entries([player_id], season.board)
        written = store.standing_correct(
            season_id,
            player_id,
            composite,
            stamp=stamp,
            shards=season.shards,
            segments=entries.get(player_id, ""),
        )
    live.standings_changed([season_id])
    return written
