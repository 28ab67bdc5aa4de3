"""Reads of a closed season's archived standings (or of a segment of them), in the same shapes the
Redis gateway returns, so every read endpoint answers for past seasons after their key is gone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connection

from seasons.models import Season
from seasons.scoring import composite_for

from .models import ArchivedSegmentStanding, ArchivedStanding
from .store import Standing

_FIELDS = ("player_id", "rank", "competition_rank", "points", "reached_at")

# A segment's rows: its own ranks, the archive's points and times.
_SEGMENT_ROWS = """
    SELECT s.player_id, s.rank, s.competition_rank, a.points, a.reached_at
    FROM leaderboards_archivedsegmentstanding s
    JOIN seasons_archivedstanding a ON a.season_id = s.season_id AND a.player_id = s.player_id
    WHERE s.season_id = %s AND s.segment = %s AND {condition}
    ORDER BY s.rank
"""


def _standing(season: Season, row: tuple) -> Standing:
    player_id, rank, competition_rank, points, reached_at = row
    composite = composite_for(
        points=points,
        reached_at=reached_at,
        season_starts_at=season.starts_at,
        lowest_first=season.board.lowest_first,
    )
    return Standing(player_id, rank, composite, competition_rank - 1)


def _size(season: Season, segment: str | None) -> int:
    if segment is not None:
        return ArchivedSegmentStanding.objects.filter(season=season, segment=segment).count()
    if season.archived_players is not None:
        return season.archived_players
    return ArchivedStanding.objects.filter(season=season).count()


def _rows(
    season: Season, segment: str | None, condition: str, params: list[Any], **orm: Any
) -> list[tuple]:
    """Rows of the archive (`orm` filters) or of a segment of it (`condition` on its rows)."""
    if segment is None:
        return list(
            ArchivedStanding.objects.filter(season=season, **orm)
            .order_by("rank")
            .values_list(*_FIELDS)
        )
    with connection.cursor() as cursor:
        cursor.execute(_SEGMENT_ROWS.format(condition=condition), [season.pk, segment, *params])
        return cursor.fetchall()


# `competition` is taken for the gateway's signature: the archive holds both ranks anyway.
def read_page(
    season: Season,
    *,
    offset: int,
    limit: int,
    competition: bool = True,
    segment: str | None = None,
) -> tuple[int, list[Standing]]:
    rows = _rows(
        season,
        segment,
        "s.rank > %s AND s.rank <= %s",
        [offset, offset + limit],
        rank__gt=offset,
        rank__lte=offset + limit,
    )
    return _size(season, segment), [_standing(season, row) for row in rows]


def read_rank(
    season: Season, player_id: str, *, competition: bool = True, segment: str | None = None
) -> tuple[int, Standing | None]:
    rows = _rows(season, segment, "s.player_id = %s", [player_id], player_id=player_id)
    return _size(season, segment), _standing(season, rows[0]) if rows else None


def read_around(
    season: Season,
    player_id: str,
    *,
    n: int,
    competition: bool = True,
    segment: str | None = None,
) -> tuple[int, Standing | None, list[Standing]]:
    size, me = read_rank(season, player_id, segment=segment)
    if me is None:
        return size, None, []
    first = max(1, me.rank - n)
    _, page = read_page(season, offset=first - 1, limit=me.rank + n - first + 1, segment=segment)
    return size, me, page


def corrected_among(season: Season, player_ids: Sequence[str]) -> set[str]:
    """Which of these players' archived standings a correction of the season changed (their
    rows are marked in every read of a closed season)."""
    return set(
        ArchivedStanding.objects.filter(
            season=season, player_id__in=player_ids, corrected_at__isnull=False
        ).values_list("player_id", flat=True)
    )


def read_many(
    season: Season,
    player_ids: Sequence[str],
    *,
    competition: bool = True,
    segment: str | None = None,
) -> tuple[int, list[Standing | None]]:
    rows = _rows(
        season, segment, "s.player_id = ANY(%s)", [list(player_ids)], player_id__in=player_ids
    )
    found = {row[0]: _standing(season, row) for row in rows}
    return _size(season, segment), [found.get(player_id) for player_id in player_ids]
