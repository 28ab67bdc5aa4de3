"""Public reads of groups of players: a player's friends ranked among themselves, the clan board,
a clan with its members ranked within it, and the players a search by name finds."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from config.building_blocks.api import PLAYER_ID_PATH, SEASON_QUERY
from config.building_blocks.errors import InvalidInput, NotFound
from config.building_blocks.input_rules import PRINTABLE_CHARACTER, PRINTABLE_RULE, printable
from config.building_blocks.player_ids import check_player_id
from config.building_blocks.schema import errors
from config.building_blocks.segments import CLAN_ID_PATTERN, clan_id_allowed

from . import clans, friends, search
from .api import (
    AROUND_RANGES,
    BOARD_QUERY,
    TOP_RANGES,
    WHOLE_BOARD_PARAMS,
    EntryOut,
    QueryInteger,
    StandingsReadView,
    integer_parameters,
    query_season,
    read_query,
)
from .search import CANDIDATES, QUERY_MAX_LENGTH


class FriendEntryOut(EntryOut):
    rank = serializers.IntegerField(help_text="The rank among the player and their friends.")
    global_rank = serializers.IntegerField(help_text="The exact rank on the whole board.")


class FriendsViewOut(serializers.Serializer):
    player_id = serializers.CharField()
    board = serializers.CharField()
    season = serializers.CharField()
    total_players = serializers.IntegerField()
    entries = FriendEntryOut(many=True)
    unranked = serializers.ListField(
        child=serializers.CharField(),
        help_text="The player and friends with no score on the board (or banned from it).",
    )


class FriendsRankView(StandingsReadView):
    @extend_schema(
        parameters=[*WHOLE_BOARD_PARAMS, PLAYER_ID_PATH],
        responses=FriendsViewOut,
        summary="A player and their friends ranked among themselves, with their global ranks",
        description="The friends are the list game servers stored "
        "(`PUT /api/v1/players/{player_id}/friends`), up to 1,000, read in one round trip. "
        "`404 player_not_found` for a player never seen.",
    )
    def get(self, request: Request, player_id: str) -> Response:
        check_player_id(player_id)
        query = read_query(request.query_params)
        if query["segment"] is not None:
            raise InvalidInput(
                "A friends view ranks the player and their friends on the whole board: leave "
                "out segment.",
                code="invalid_segment",
                details={"segment": query["segment"]},
            )
        season = query_season(query)
        view = friends.player_friends_view(
            season=season, player_id=player_id, rank_style=query["rank_style"]
        )
        if view is None:
            raise NotFound(f"Unknown player '{player_id}'.", code="player_not_found")
        return Response(view)


class ClanEntryOut(serializers.Serializer):
    rank = serializers.IntegerField()
    clan_id = serializers.CharField()
    name = serializers.CharField()
    points = serializers.IntegerField(
        help_text="The members' points summed, or the best member's (by the board's rule)."
    )


class ClansTopOut(serializers.Serializer):
    board = serializers.CharField()
    season = serializers.CharField()
    as_of = serializers.DateTimeField()
    total_clans = serializers.IntegerField()
    entries = ClanEntryOut(many=True)


class ClanMembersOut(serializers.Serializer):
    total_players = serializers.IntegerField(help_text="The clan's members with a score.")
    entries = EntryOut(many=True, help_text="Ranked within the clan.")


class ClanStandingOut(serializers.Serializer):
    clan_id = serializers.CharField()
    name = serializers.CharField()
    board = serializers.CharField()
    season = serializers.CharField()
    rank = serializers.IntegerField()
    points = serializers.IntegerField()
    total_clans = serializers.IntegerField()
    percentile = serializers.FloatField()
    entries = ClanEntryOut(many=True, help_text="The clans around it, n each side.")
    members = ClanMembersOut()


CLAN_RANGES = {
    **AROUND_RANGES,
    "limit": QueryInteger(10, 1, 100, "Members listed, best first, "),
}
_CLAN_ID_PATH = OpenApiParameter(
    "clan_id", str, OpenApiParameter.PATH, pattern=CLAN_ID_PATTERN, description="The clan's id."
)


class ClansTopView(StandingsReadView):
    @extend_schema(
        parameters=[*WHOLE_BOARD_PARAMS, *integer_parameters(TOP_RANGES)],
        responses={200: ClansTopOut, **errors(404)},
        summary="The clan board: clans ranked by their members' season totals",
        description="A clan's points are its members' summed on a board of sums, its best "
        "member's on a board of bests; equal sums tie by clan id, equal bests by who reached "
        "them first.",
    )
    def get(self, request: Request) -> Response:
        query = read_query(request.query_params, **TOP_RANGES)
        season = query_season(query)
        page = clans.clans_top(
            season=season,
            offset=query["offset"],
            limit=query["limit"],
            rank_style=query["rank_style"],
        )
        return Response(ClansTopOut(page).data)


class ClanStandingView(StandingsReadView):
    @extend_schema(
        parameters=[*WHOLE_BOARD_PARAMS, _CLAN_ID_PATH, *integer_parameters(CLAN_RANGES)],
        responses=ClanStandingOut,
        summary="A clan's rank, the clans around it, and its members ranked within it",
        description="`404 clan_not_found` for a clan that does not exist, `404 clan_not_ranked` "
        "for one with no member with a score in the season.",
    )
    def get(self, request: Request, clan_id: str) -> Response:
        if not clan_id_allowed(clan_id):
            raise NotFound(f"There is no clan '{clan_id}'.", code="clan_not_found")
        query = read_query(request.query_params, **CLAN_RANGES)
        season = query_season(query)
        standing = clans.clan_standing(
            season=season,
            clan_id=clan_id,
            n=query["n"],
            limit=query["limit"],
            rank_style=query["rank_style"],
        )
        return Response(ClanStandingOut(standing).data)


class FoundPlayerOut(serializers.Serializer):
    player_id = serializers.CharField()
    display_name = serializers.CharField()
    avatar_url = serializers.CharField()
    rank = serializers.IntegerField(allow_null=True, help_text="Null: no score in the season.")
    points = serializers.IntegerField(allow_null=True)


class PlayerSearchOut(serializers.Serializer):
    query = serializers.CharField()
    board = serializers.CharField()
    season = serializers.CharField()
    players = FoundPlayerOut(many=True)
    next_offset = serializers.IntegerField(
        allow_null=True, help_text="The next page's offset; null after the last."
    )


SEARCH_RANGES = {
    "offset": QueryInteger(0, 0, CANDIDATES, "Players skipped, "),
    "limit": QueryInteger(10, 1, 50, "Players listed, "),
}
_SEARCH_QUERY = OpenApiParameter(
    "search",
    {
        "type": "string",
        "minLength": 1,
        "maxLength": QUERY_MAX_LENGTH,
        "pattern": f"^{PRINTABLE_CHARACTER}*$",
    },
    required=True,
    description=f"The start of a display name, any case (or a player's exact id): "
    f"{PRINTABLE_RULE}.",
)


class PlayerSearchView(StandingsReadView):
    @extend_schema(
        parameters=[
            _SEARCH_QUERY,
            BOARD_QUERY,
            SEASON_QUERY,
            *integer_parameters(SEARCH_RANGES),
        ],
        responses={200: PlayerSearchOut, **errors(404)},
        operation_id="players_search",
        summary="Players by name: a case-insensitive prefix, ranked by relevance, then by rank",
        description="An exact name first, then an exact player id, then names that start with "
        "the query; within each, the better ranked on the board's season (the running one by "
        f"default) first. Among the first {CANDIDATES} names that share the prefix, in a page "
        "of `limit`: `next_offset` is the next page's.",
    )
    def get(self, request: Request) -> Response:
        wanted = request.query_params.get("search", "")
        if not 1 <= len(wanted) <= QUERY_MAX_LENGTH or not printable(wanted):
            raise InvalidInput(
                f"search must be the start of a display name: 1-{QUERY_MAX_LENGTH} "
                f"{PRINTABLE_RULE}.",
                details={"search": wanted[:QUERY_MAX_LENGTH]},
            )
        query = read_query(request.query_params, **SEARCH_RANGES)
        season = query_season(query)
        found = search.players_search(
            query=wanted, season=season, offset=query["offset"], limit=query["limit"]
        )
        return Response(PlayerSearchOut(found).data)
