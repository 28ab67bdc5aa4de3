"""The clan board: a season's clans ranked by their members' standings (the sum of their points,
or their best member's, by the board's rule), kept by the mirror beside the players' board; a
clan's rank with the clans around it, and its members ranked within it. A closed season's come
from its archive."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.utils import timezone

from config.building_blocks.errors import NotFound
from matches.models import Clan
from seasons.models import ScoreOperator, Season, SeasonState
from seasons.scoring import MAX_POINTS, TIME_SLOTS, points_of

from . import selectors, store
from .models import ArchivedClanStanding


def _summed(season: Season) -> bool:
    return season.board.score_operator == ScoreOperator.SUM


def clan_points(season: Season, score: int) -> int:
    """A clan's points from its standing's score: its members' sum (kept signed, see
    store/scripts.py `clan_follow`), or its best member's points."""
    if _summed(season):
        signed = score // TIME_SLOTS
        return -signed if season.board.lowest_first else signed
    return points_of(score, lowest_first=season.board.lowest_first)


class _Together:
    """A sharded season's clans, put together once a read (store.clans_together)."""

    def __init__(self, season: Season, whole: bool) -> None:
        self.rows = store.clans_together(
            season.pk, shards=season.shards, summed=_summed(season), shared=True, whole=whole
        )
        self.place = {clan_id: i for i, (clan_id, _) in enumerate(self.rows)}

    def better(self, score: int) -> int:
        """Clans with better points than `score`: the rows before the first of its points."""
        points = score // TIME_SLOTS
        return next(i for i, (_, s) in enumerate(self.rows) if s // TIME_SLOTS == points)

    def page(self, offset: int, limit: int) -> tuple[int, list[store.Standing]]:
        rows = self.rows[offset : offset + limit]
        return len(self.rows), [
            store.Standing(clan_id, offset + i + 1, score, self.better(score))
            for i, (clan_id, score) in enumerate(rows)
        ]

    def around(
        self, clan_id: str, n: int
    ) -> tuple[int, store.Standing | None, list[store.Standing]]:
        place = self.place.get(clan_id)
        if place is None:
            return len(self.rows), None, []
        first = max(0, place - n)
        _, window = self.page(first, place + n + 1 - first)
        return len(self.rows), window[place - first], window


def _live_reads(season: Season) -> tuple[Any, Any]:
    """(page(offset, limit), around(clan_id, n)) of a live season's clans."""
    whole = selectors.standings_whole_required(season)
    if season.shards > 1:
        together = _Together(season, whole)
        return together.page, together.around

    def page(offset: int, limit: int) -> tuple[int, list[store.Standing]]:
        return store.read_page(
            season.pk, offset=offset, limit=limit, shared=True, whole=whole, segment=store.CLANS
        )

    def around(clan_id: str, n: int) -> tuple[int, store.Standing | None, list[store.Standing]]:
        return store.read_around(
            season.pk, clan_id, n=n, shared=True, whole=whole, segment=store.CLANS
        )

    return page, around


def _archived_reads(season: Season) -> tuple[Any, Any]:
    rows = list(
        ArchivedClanStanding.objects.filter(season=season)
        .order_by("rank")
        .values_list("clan_id", "rank", "competition_rank", "points")
    )
    lowest_first = season.board.lowest_first
    place = {row[0]: i for i, row in enumerate(rows)}

    def standing(row: tuple) -> store.Standing:
        """The archived row with a score clan_points reads its points from."""
        clan_id, rank, competition_rank, points = row
        if _summed(season):
            part = -points if lowest_first else points
        else:
            part = MAX_POINTS - points if lowest_first else points
        return store.Standing(clan_id, rank, part * TIME_SLOTS, competition_rank - 1)

    def page(offset: int, limit: int) -> tuple[int, list[store.Standing]]:
        return len(rows), [standing(row) for row in rows[offset : offset + limit]]

    def around(clan_id: str, n: int) -> tuple[int, store.Standing | None, list[store.Standing]]:
        at = place.get(clan_id)
        if at is None:
            return len(rows), None, []
        first = max(0, at - n)
        window = [standing(row) for row in rows[first : at + n + 1]]
        return len(rows), window[at - first], window

    return page, around


def _reads(season: Season) -> tuple[Any, Any]:
    reads = _archived_reads(season) if season.state == SeasonState.CLOSED else _live_reads(season)
    return tuple(selectors.season_lost_raised(read, season.pk) for read in reads)  # type: ignore[return-value]


def _entries(
    season: Season, standings: Sequence[store.Standing], rank_style: str
) -> list[dict[str, Any]]:
    names = dict(
        Clan.objects.filter(clan_id__in=[s.player_id for s in standings]).values_list(
            "clan_id", "name"
        )
    )
    return [
        {
            "rank": selectors.rank_in_style(standing, rank_style),
            "clan_id": standing.player_id,
            "name": names.get(standing.player_id) or standing.player_id,
            "points": clan_points(season, standing.composite),
        }
        for standing in standings
    ]


def clans_top(
    *, season: Season, offset: int = 0, limit: int = 10, rank_style: str = "ordinal"
) -> dict[str, Any]:
    """A page of the season's clan board."""
    page, _ = _reads(season)
    total, standings = page(offset, limit)
    return {
        "board": season.board.slug,
        "season": season.slug,
        "as_of": timezone.now(),
        "total_clans": total,
        "entries": _entries(season, standings, rank_style),
    }


def clan_standing(
    *, season: Season, clan_id: str, n: int = 5, limit: int = 10, rank_style: str = "ordinal"
) -> dict[str, Any]:
    """A clan's rank and points with the `n` clans each side, and its first `limit` members
    ranked within it (with their ranks on the whole board too). `404 clan_not_found` for a clan
    that does not exist, `404 clan_not_ranked` for one with no standing in the season."""
    clan = Clan.objects.filter(clan_id=clan_id).first()
    if clan is None:
        raise NotFound(f"There is no clan '{clan_id}'.", code="clan_not_found")
    _, around = _reads(season)
    total, me, window = around(clan_id, n)
    if me is None:
        raise NotFound(
            f"Clan '{clan_id}' has no standing in season '{season.slug}'.",
            code="clan_not_ranked",
        )
    entries = _entries(season, window, rank_style)
    mine = next(entry for entry in entries if entry["clan_id"] == clan_id)
    return {
        "clan_id": clan_id,
        "name": clan.name or clan_id,
        "board": season.board.slug,
        "season": season.slug,
        "rank": mine["rank"],
        "points": mine["points"],
        "total_clans": total,
        "percentile": selectors.percentile_of(me.rank, total),
        "entries": entries,
        "members": _members(season, clan_id, limit, rank_style),
    }


def _members(season: Season, clan_id: str, limit: int, rank_style: str) -> dict[str, Any]:
    """The clan's first `limit` members ranked within it: a segment of the board (its live set's,
    or its archive's once closed)."""
    segment = store.clan_members_segment(clan_id)
    total, standings = selectors.standings_source(season).read_page(
        offset=0, limit=limit, competition=rank_style == "competition", segment=segment
    )
    return {
        "total_players": total,
        "entries": selectors.standing_entries(season, standings, rank_style),
    }
