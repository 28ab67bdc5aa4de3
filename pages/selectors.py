"""Reads behind the player pages, composed from the leaderboard and season selectors.

Each function returns what one page shows; unknown boards, seasons, pages and players raise
NotFound like the API does, and the views turn that into the HTML 404 page.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils import timezone

from config.building_blocks.errors import NotFound
from config.building_blocks.player_ids import player_id_allowed
from config.building_blocks.segments import clan_id_allowed
from leaderboards.clans import clan_standing, clans_top
from leaderboards.friends import player_friends_view
from leaderboards.history import player_history, rewards_of
from leaderboards.search import players_search
from leaderboards.segments import segment_parse
from leaderboards.selectors import player_around, player_standing, season_segments
from leaderboards.top_answers import leaderboard_top
from matches.models import Player
from matches.selectors import seasons_played
from seasons.models import Season, SeasonState, SeasonStatus
from seasons.selectors import boards_list, season_for_read, seasons_list, seasons_open_shown

from .charts import RankChart, rank_chart
from .models import RankSample

PAGE_SIZE = 100
# Players shown above and below a player on their page.
AROUND = 5
# Clans a clan-board page lists, and members a clan page lists.
CLANS_PAGE = 100
CLAN_MEMBERS_PAGE = 100


@dataclass(frozen=True, slots=True)
class SeasonView:
    """A season as the pages show it: its status now and whether it still moves."""

    season: Season
    status: str
    live: bool
    time_left_seconds: int | None


def _season_view(season: Season, now: datetime) -> SeasonView:
    status = season.status_at(now)
    running = status == SeasonStatus.RUNNING
    return SeasonView(
        season=season,
        status=status,
        # Results keep arriving until the close job takes over (the grace period included).
        live=season.state == SeasonState.OPEN and now >= season.starts_at,
        time_left_seconds=int((season.ends_at - now).total_seconds()) if running else None,
    )


def _board_and_seasons(season: Season, now: datetime) -> dict[str, Any]:
    """What every board page shows around its table: the boards, the season and its picker."""
    return {
        "board": season.board,
        "boards": list(boards_list()),
        "season_view": _season_view(season, now),
        "seasons": [
            _season_view(s, now)
            for s in seasons_list(board=season.board).filter(starts_at__lte=now).reverse()
        ],
    }


def _friends_page(season: Season, player_id: str, now: datetime) -> dict[str, Any]:
    """The board page's frame around a player's friends view (one table, no pages)."""
    view = None
    if player_id_allowed(player_id):
        view = player_friends_view(season=season, player_id=player_id)
    if view is None:
        raise NotFound(f"Unknown player '{player_id}'.", code="player_not_found")
    return {
        **_board_and_seasons(season, now),
        "top": {"total_players": view["total_players"], "entries": view["entries"]},
        "friends": view,
        "page": 1,
        "pages": 1,
        "offset": 0,
        "page_size": PAGE_SIZE,
    }


def board_page(
    *,
    board_slug: str,
    season_slug: str | None,
    page: int,
    friends_of: str | None = None,
    segment: str | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """One page of 100 of a board's season (the running one by default), live or archived, of
    the whole board or within one segment (`segment`); or, with `friends_of`, that player and
    their friends ranked among themselves."""
    now = now or timezone.now()
    season = season_for_read(board_slug=board_slug, season_slug=season_slug)
    if friends_of is not None:
        return _friends_page(season, friends_of, now)
    segment = segment_parse(segment, season.board.segment_dimensions)
    offset = (page - 1) * PAGE_SIZE
    top = leaderboard_top(season=season, offset=offset, limit=PAGE_SIZE, segment=segment)
    pages = max(1, -(-top["total_players"] // PAGE_SIZE))
    if page > pages:
        raise NotFound(f"Page {page} is past the last page ({pages}).", code="page_not_found")
    rewarded = season.state == SeasonState.CLOSED
    if rewarded:
        # A closed season's page shows what each player won, as their own page does.
        codes = rewards_of(
            season=season,
            player_ids=[e["player_id"] for e in top["entries"]],
            segment=segment or "",
        )
        top = {
            **top,
            "entries": [{**e, "reward": codes.get(e["player_id"], "")} for e in top["entries"]],
        }
    return {
        **_board_and_seasons(season, now),
        "top": top,
        "rewarded": rewarded,
        "friends": None,
        "segment": segment,
        "segments": season_segments(season),
        "page": page,
        "pages": pages,
        "offset": offset,
        "page_size": PAGE_SIZE,
    }


def clans_page(
    *, board_slug: str, season_slug: str | None, now: datetime | None = None
) -> dict[str, Any]:
    """The clan board's first CLANS_PAGE clans of a board's season (the running one by default)."""
    now = now or timezone.now()
    season = season_for_read(board_slug=board_slug, season_slug=season_slug)
    return {
        **_board_and_seasons(season, now),
        "clans": clans_top(season=season, limit=CLANS_PAGE),
    }


def clan_page(
    *, board_slug: str, clan_id: str, season_slug: str | None, now: datetime | None = None
) -> dict[str, Any]:
    """A clan's standing on a board's season with its first CLAN_MEMBERS_PAGE members."""
    now = now or timezone.now()
    season = season_for_read(board_slug=board_slug, season_slug=season_slug)
    if not clan_id_allowed(clan_id):
        raise NotFound(f"There is no clan '{clan_id}'.", code="clan_not_found")
    return {
        **_board_and_seasons(season, now),
        "clan": clan_standing(season=season, clan_id=clan_id, n=2, limit=CLAN_MEMBERS_PAGE),
    }


@dataclass(frozen=True, slots=True)
class PlayerSeason:
    """A player's standing in one running season, with their neighbours and their rank chart."""

    season_view: SeasonView
    standing: dict[str, Any]
    around: list[dict[str, Any]]
    chart: RankChart | None


def _rank_samples(season: Season, player_id: str) -> list[tuple[datetime, int]]:
    return list(
        RankSample.objects.filter(season=season, player_id=player_id)
        .order_by("sampled_at")
        .values_list("sampled_at", "rank")
    )


def player_page(*, player_id: str, now: datetime | None = None) -> dict[str, Any]:
    """A player's profile, their standing in each running season and their past seasons."""
    now = now or timezone.now()
    player = None
    if player_id_allowed(player_id):
        player = Player.objects.filter(player_id=player_id).first()
    if player is None:
        raise NotFound(f"There is no player '{player_id}'.", code="player_not_found")
    started = [season for season in seasons_open_shown() if season.starts_at <= now]
    played = seasons_played(player_id=player_id, season_ids=[season.pk for season in started])
    seasons = [season for season in started if season.pk in played]
    standings = []
    for season in seasons:
        standing = player_standing(season=season, player_id=player_id)
        if standing is None:
            # Not in the live board (yet): mirrored a moment later, or the player is banned.
            continue
        around = player_around(season=season, player_id=player_id, n=AROUND)
        samples = _rank_samples(season, player_id)
        # The live rank is the chart's last point: samples only follow the player's play.
        samples.append((now, standing["rank"]))
        standings.append(
            PlayerSeason(
                season_view=_season_view(season, now),
                standing=standing,
                around=around["entries"] if around is not None else [],
                chart=rank_chart(samples=samples, starts_at=season.starts_at, now=now),
            )
        )
    return {
        "player": player,
        "standings": standings,
        "history": player_history(player_id=player_id),
        "around_n": AROUND,
    }


SEARCH_PAGE = 20


def player_search_page(*, query: str) -> dict[str, Any]:
    """The players the lookup box's text may mean (a name's start, any case, or an exact id),
    ranked on the default board's running season; `only` is the one to go to straight away:
    an exact id, or the single player found."""
    season = season_for_read(board_slug=None, season_slug=None)
    found = players_search(query=query, season=season, offset=0, limit=SEARCH_PAGE)
    players = found["players"]
    exact = next((p["player_id"] for p in players if p["player_id"] == query), None)
    only = exact or (players[0]["player_id"] if len(players) == 1 else None)
    if only is None and not players and player_id_allowed(query):
        # No name starts so: an id, as the box always took (its page says if nobody has it).
        only = query
    return {"query": query, "season": season, "found": found, "only": only}
