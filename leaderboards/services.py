"""Writes to the Redis mirror: mirror committed totals, sweep what was missed, rebuild a season.

PostgreSQL is the truth; everything here can be repeated any number of times, in any order.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from matches.models import PlayerTotal
from seasons.models import ScoreOperator, Season, SeasonState, SortOrder

from . import live, store
from .scoring import composite_for

logger = logging.getLogger(__name__)

MIRROR_CHUNK = 1000
# How many totals one mirror task may write in all, its own and others still pending.
MIRROR_COALESCE = 2000
REBUILD_CHUNK = 20000
# Totals changed this long before a rebuild started are re-mirrored after the swap, which
# covers transactions that were open while the rebuild read the season.
REBUILD_CATCH_UP = timedelta(minutes=5)


def _worsening(*, score_operator: str, sort_order: str) -> bool:
    return score_operator == ScoreOperator.SUM and sort_order == SortOrder.LOWEST_FIRST


def totals_mirror(*, total_ids: Sequence[int]) -> int:
    """Write the current totals of `total_ids` into their seasons' ZSETs; returns how many."""
    mirrored = 0
    for start in range(0, len(total_ids), MIRROR_CHUNK):
        mirrored += _mirror_chunk(list(total_ids[start : start + MIRROR_CHUNK]))
    return mirrored


def _mirror_chunk(total_ids: list[int]) -> int:
    totals = PlayerTotal.objects.filter(id__in=total_ids).exclude(season__state=SeasonState.CLOSED)
    # Banned players are kept off live boards; removing them here also undoes a mirror that
    # raced with the ban.
    for season_id, player_id in totals.filter(player__banned_at__isnull=False).values_list(
        "season_id", "player_id"
    ):
        store.remove_players(season_id, [player_id])
    rows = list(
        totals.filter(player__banned_at__isnull=True).values_list(
            "id",
            "season_id",
            "player_id",
            "points",
            "reached_at",
            "version",
            "season__starts_at",
            "season__board__score_operator",
            "season__board__sort_order",
        )
    )
    if not rows:
        return 0
    store.write_standings(
        store.StandingWrite(
            season_id=season_id,
            player_id=player_id,
            composite=composite_for(
                points=points,
                reached_at=reached_at,
                season_starts_at=starts_at,
                lowest_first=sort_order == SortOrder.LOWEST_FIRST,
            ),
            worsening=_worsening(score_operator=operator, sort_order=sort_order),
        )
        for _, season_id, player_id, points, reached_at, _, starts_at, operator, sort_order in rows
    )
    live.standings_changed({row[1] for row in rows})
    # Record what was written; GREATEST keeps an older, slower task from moving it back.
    with connection.cursor() as cursor:
        # Rows are locked in the write path's order, (season, player), so the two never
        # deadlock; a row locked by a writer is skipped: it is about to get a new version,
        # which its own mirror task (or the sweep) records.
        cursor.execute(
            """
            UPDATE matches_playertotal AS t
            SET mirrored_version = GREATEST(t.mirrored_version, v.version)
            FROM (
                SELECT locked.id, wanted.version
                FROM matches_playertotal AS locked
                JOIN unnest(%s::bigint[], %s::bigint[]) AS wanted(id, version)
                  ON locked.id = wanted.id
                WHERE locked.mirrored_version < wanted.version
                ORDER BY locked.season_id, locked.player_id
                FOR NO KEY UPDATE OF locked SKIP LOCKED
            ) AS v
            WHERE t.id = v.id
            """,
            [[row[0] for row in rows], [row[5] for row in rows]],
        )
    return len(rows)


def totals_mirror_committed(*, total_ids: Sequence[int]) -> int:
    """What the mirror task does after a commit: write these totals if they are still not
    mirrored, and take along other pending totals, so that under load one task does the work of
    many queued ones and the queue behind it finds nothing left to do."""
    pending = PlayerTotal.objects.filter(mirrored_version__lt=F("version"))
    mine = list(pending.filter(id__in=total_ids).values_list("id", flat=True))
    if not mine:
        return 0
    others = list(
        pending.exclude(id__in=mine)
        .order_by("updated_at")
        .values_list("id", flat=True)[: max(0, MIRROR_COALESCE - len(mine))]
    )
    return totals_mirror(total_ids=mine + others)


def totals_mirror_pending(*, limit: int = 20000) -> int:
    """The sweep: mirror totals committed but not yet mirrored (a lost task, a Redis outage)."""
    pending = list(
        PlayerTotal.objects.filter(mirrored_version__lt=F("version"))
        .order_by("updated_at")
        .values_list("id", flat=True)[:limit]
    )
    if not pending:
        return 0
    mirrored = totals_mirror(total_ids=pending)
    logger.info("sweep mirrored %d pending totals", mirrored)
    return mirrored


def mirror_lag_seconds(*, now: datetime | None = None) -> float:
    """Age of the oldest committed total not yet mirrored (0 when the mirror is caught up)."""
    oldest = (
        PlayerTotal.objects.filter(mirrored_version__lt=F("version"))
        .order_by("updated_at")
        .values_list("updated_at", flat=True)
        .first()
    )
    if oldest is None:
        return 0.0
    return max(0.0, ((now or timezone.now()) - oldest).total_seconds())


def _season_composites(season: Season) -> Iterator[list[tuple[str, int]]]:
    """Every player's composite score in the season, computed by PostgreSQL, in chunks.

    The arithmetic is scoring.composite_for in SQL, so ten million rows never pass through
    Python objects one by one; tests check both agree. Rows come best first: Redis inserts
    each new lowest score next to the skiplist's head, which made building a large board
    about twice as fast as inserting in table order (measured on 2 million players).
    """
    ranked_points = "(536870911 - points)" if season.board.lowest_first else "points"
    with transaction.atomic(), connection.chunked_cursor() as cursor:
        cursor.execute(
            f"""
            SELECT player_id,
                   {ranked_points}::bigint * 16777216 + 16777215
                   - LEAST(GREATEST(floor(extract(epoch FROM reached_at - %s)), 0),
                           16777215)::bigint
            FROM matches_playertotal t
            WHERE season_id = %s AND NOT EXISTS (
                SELECT 1 FROM matches_player p
                WHERE p.player_id = t.player_id AND p.banned_at IS NOT NULL)
            ORDER BY 2 DESC
            """,  # noqa: S608 - the points expression is one of two fixed strings
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
    """Rebuild a season's ZSET from PostgreSQL and swap it in atomically; returns its size."""
    started = timezone.now()
    size = store.rebuild_standings(season.id, _season_composites(season), on_chunk=on_progress)
    live.standings_changed([season.id])
    # Mirror tasks that ran while the rebuild was reading wrote into the old key, which the
    # swap replaced: write the totals that changed since then once more.
    recent = list(
        PlayerTotal.objects.filter(
            season=season, updated_at__gte=started - REBUILD_CATCH_UP
        ).values_list("id", flat=True)
    )
    totals_mirror(total_ids=recent)
    logger.info("rebuilt season %s: %d players, %d caught up", season.pk, size, len(recent))
    return size


def player_standings_refresh(*, player_id: str) -> int:
    """After a ban or an unban: take the player off every live board, or put them back exactly
    as PostgreSQL has them. Returns how many seasons were touched."""
    totals = PlayerTotal.objects.filter(player_id=player_id).exclude(
        season__state=SeasonState.CLOSED
    )
    ids = list(totals.values_list("id", flat=True))
    totals_mirror(total_ids=ids)
    return len(ids)
