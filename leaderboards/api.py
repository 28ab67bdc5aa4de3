"""Public leaderboard reads: top, a player's rank, around-me, and many players' ranks."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import (
    BOARD_QUERY,
    PLAYER_ID_PATH,
    SEASON_QUERY,
    StrictCharField,
    StrictSerializer,
    validate_query,
)
from config.errors import InvalidInput, NotFound
from matches.api import check_player_id, player_id_field_validator
from seasons.models import Season
from seasons.selectors import season_for_read

from . import selectors


class SeasonQuery(serializers.Serializer):
    board = serializers.SlugField(required=False, max_length=64)
    season = serializers.SlugField(required=False, max_length=64)
    rank_style = serializers.ChoiceField(choices=selectors.RANK_STYLES, default="ordinal")


class TopQuery(SeasonQuery):
    limit = serializers.IntegerField(min_value=1, max_value=100, default=10)
    offset = serializers.IntegerField(min_value=0, max_value=2**31, default=0)


class AroundQuery(SeasonQuery):
    n = serializers.IntegerField(min_value=0, max_value=50, default=5)


class EntryOut(serializers.Serializer):
    rank = serializers.IntegerField()
    player_id = serializers.CharField()
    display_name = serializers.CharField()
    avatar_url = serializers.CharField(allow_blank=True)
    points = serializers.IntegerField()


class TopOut(serializers.Serializer):
    board = serializers.CharField()
    season = serializers.CharField()
    as_of = serializers.DateTimeField()
    total_players = serializers.IntegerField()
    entries = EntryOut(many=True)


class PlayerRankOut(serializers.Serializer):
    player_id = serializers.CharField()
    board = serializers.CharField()
    season = serializers.CharField()
    rank = serializers.IntegerField()
    points = serializers.IntegerField()
    total_players = serializers.IntegerField()
    percentile = serializers.FloatField()


class AroundOut(PlayerRankOut):
    entries = EntryOut(many=True)


class RanksIn(StrictSerializer):
    player_ids = serializers.ListField(
        child=StrictCharField(
            min_length=1,
            max_length=64,
            trim_whitespace=False,
            validators=[player_id_field_validator],
        ),
        min_length=1,
        max_length=200,
    )
    board = serializers.SlugField(required=False, max_length=64)
    season = serializers.SlugField(required=False, max_length=64)


class RankEntryOut(serializers.Serializer):
    rank = serializers.IntegerField(allow_null=True)
    player_id = serializers.CharField()
    display_name = serializers.CharField()
    avatar_url = serializers.CharField(allow_blank=True)
    points = serializers.IntegerField(allow_null=True)


class RanksOut(serializers.Serializer):
    board = serializers.CharField()
    season = serializers.CharField()
    total_players = serializers.IntegerField()
    entries = RankEntryOut(many=True)


_SEASON_PARAMS = [
    BOARD_QUERY,
    SEASON_QUERY,
    OpenApiParameter(
        "rank_style",
        str,
        enum=list(selectors.RANK_STYLES),
        description="ordinal (default, unique ranks) or competition (1-2-2-4).",
    ),
]


def _season(query: dict[str, Any]) -> Season:
    return season_for_read(board_slug=query.get("board"), season_slug=query.get("season"))


def _not_ranked(player_id: str, season: Season) -> NotFound:
    return NotFound(
        f"Player '{player_id}' has no score in season '{season.slug}'.",
        code="player_not_ranked",
    )


class TopView(APIView):
    @extend_schema(
        parameters=[
            *_SEASON_PARAMS,
            OpenApiParameter(
                "limit",
                {"type": "integer", "minimum": 1, "maximum": 100},
                description="1-100, default 10.",
            ),
            OpenApiParameter(
                "offset",
                {"type": "integer", "minimum": 0, "maximum": 2**31},
                description="Ranks to skip, default 0.",
            ),
        ],
        responses=TopOut,
        summary="The top of the board (pages through the whole board with offset)",
    )
    def get(self, request: Request) -> Response:
        query = validate_query(TopQuery, request.query_params)
        season = _season(query)
        return Response(
            TopOut(
                selectors.leaderboard_top(
                    season=season,
                    offset=query["offset"],
                    limit=query["limit"],
                    rank_style=query["rank_style"],
                )
            ).data
        )


class PlayerRankView(APIView):
    @extend_schema(
        parameters=[*_SEASON_PARAMS, PLAYER_ID_PATH],
        responses=PlayerRankOut,
        summary="A player's exact rank, points and percentile",
    )
    def get(self, request: Request, player_id: str) -> Response:
        check_player_id(player_id)
        query = validate_query(SeasonQuery, request.query_params)
        season = _season(query)
        standing = selectors.player_standing(
            season=season, player_id=player_id, rank_style=query["rank_style"]
        )
        if standing is None:
            raise _not_ranked(player_id, season)
        return Response(standing)


class AroundView(APIView):
    @extend_schema(
        parameters=[
            *_SEASON_PARAMS,
            PLAYER_ID_PATH,
            OpenApiParameter(
                "n",
                {"type": "integer", "minimum": 0, "maximum": 50},
                description="0-50, default 5.",
            ),
        ],
        responses=AroundOut,
        summary="The ranks just above and below a player",
    )
    def get(self, request: Request, player_id: str) -> Response:
        check_player_id(player_id)
        query = validate_query(AroundQuery, request.query_params)
        season = _season(query)
        around = selectors.player_around(
            season=season, player_id=player_id, n=query["n"], rank_style=query["rank_style"]
        )
        if around is None:
            raise _not_ranked(player_id, season)
        return Response(AroundOut(around).data)


class RanksView(APIView):
    @extend_schema(
        parameters=_SEASON_PARAMS,
        request=RanksIn,
        responses=RanksOut,
        summary="Ranks of up to 200 players at once (a friends view)",
    )
    def post(self, request: Request) -> Response:
        query = validate_query(SeasonQuery, request.query_params)
        body = RanksIn(data=request.data)
        if not body.is_valid():
            raise InvalidInput("The request is invalid.", details={"fields": body.errors})
        season = _season({**query, **body.validated_data})
        player_ids = list(dict.fromkeys(body.validated_data["player_ids"]))
        return Response(
            RanksOut(
                selectors.players_ranks(
                    season=season, player_ids=player_ids, rank_style=query["rank_style"]
                )
            ).data
        )
