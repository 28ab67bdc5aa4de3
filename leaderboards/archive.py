"""Reads of a closed season's archived standings, in the same shapes the Redis gateway returns,
so every read endpoint answers for past seasons after their key is gone."""

from __future__ import annotations

from collections.abc import Sequence

from seasons.models import Season
from seasons.scoring import composite_for

from .models import ArchivedStanding
from .store import Standing

_FIELDS = ("player_id", "rank", "competition_rank", "points", "reached_at")


def _standing(season: Season, row: tuple) -> Standing:
    player_id, rank, competition_rank, points, reached_at = row
    composite = composite_for(
        points=points,
        reached_at=reached_at,
        season_starts_at=season.starts_at,
        lowest_first=season.board.lowest_first,
    )
    return Standing(player_id, rank, composite, competition_rank - 1)


def _size(season: Season) -> int:
    if season.archived_players is not None:
        return season.archived_players
    return ArchivedStanding.objects.filter(season=season).count()


# `competition` is taken for the gateway's signature: the archive holds both ranks anyway.
def read_page(
    season: Season, *, offset: int, limit: int, competition: bool = True
) -> tuple[int, list[Standing]]:
    rows = (
        ArchivedStanding.objects.filter(season=season, rank__gt=offset, rank__lte=offset + limit)
        .order_by("rank")
        .values_list(*_FIELDS)
    )
    return _size(season), [_standing(season, row) for row in rows]


def read_rank(
    season: Season, player_id: str, *, competition: bool = True
) -> tuple[int, Standing | None]:
    row = (
        ArchivedStanding.objects.filter(season=season, player_id=player_id)
        .values_list(*_FIELDS)
        .first()
    )
    return _size(season), None if row is None else _standing(season, row)


def read_around(
    season: Season, player_id: str, *, n: int, competition: bool = True
) -> tuple[int, Standing | None, list[Standing]]:
    size, me = read_rank(season, player_id)
    if me is None:
        return size, None, []
    first = max(1, me.rank - n)
    _, page = read_page(season, offset=first - 1, limit=me.rank + n - first + 1)
    return size, me, page


def read_many(
    season: Season, player_ids: Sequence[str], *, competition: bool = True
) -> tuple[int, list[Standing | None]]:
    rows = ArchivedStanding.objects.filter(season=season, player_id__in=player_ids).values_list(
        *_FIELDS
    )
    found = {row[0]: _standing(season, row) for row in rows}
    return _size(season), [found.get(player_id) for player_id in player_ids]
