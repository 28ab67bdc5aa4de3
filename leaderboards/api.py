"""Public leaderboard reads: top, a player's rank, around-me, many players' ranks (a player's
seasons and a closed season's rewards: history_api.py)."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from django.http import HttpResponse, HttpResponseNotModified
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.building_blocks.api import (
    PLAYER_ID_PATH,
    SEASON_QUERY,
    StrictCharField,
    StrictSerializer,
)
from config.building_blocks.errors import InvalidInput, NotFound
from config.building_blocks.player_ids import (
    check_player_id,
    player_id_field_validator,
)
from config.building_blocks.schema import errors
from config.building_blocks.segments import (
    CLAN_DIMENSION,
    CLAN_ID_CHARACTERS,
    DIMENSION_CHARACTERS,
    SEGMENT_VALUE_CHARACTERS,
)
from config.building_blocks.slugs import SLUG_MAX_LENGTH, slug_allowed, slug_validator
from seasons.api import BOARD_QUERY
from seasons.models import Season
from seasons.selectors import season_for_read

from . import heals, selectors, top_answers
from .segments import segment_parse

_INTEGER = re.compile(r"\A[+-]?[0-9]{1,12}\Z")


class QueryInteger(NamedTuple):
    """A whole-number query parameter: read by read_query, described by its OpenAPI parameter."""

    default: int
    low: int
    high: int
    meaning: str = ""

    def parameter(self, name: str) -> OpenApiParameter:
        return OpenApiParameter(
            name,
            {"type": "integer", "minimum": self.low, "maximum": self.high},
            description=f"{self.meaning}{self.low}-{self.high}, default {self.default}.",
        )


def read_query(params: Any, **ranges: QueryInteger) -> dict[str, Any]:
    """The read endpoints' query: board, season, rank_style and the integers in `ranges`
    (by name). Written out rather than a serializer per request because
    these are the hottest endpoints (the benchmark measured the serializer at 5-8% of a rank
    read). An empty board, season or segment means "not given", as their patterns say; an empty
    rank_style or number is refused, as a value no enum or integer holds."""
    errors: dict[str, list[str]] = {}
    query: dict[str, Any] = {}
    for name in ("board", "season"):
        value = params.get(name) or None
        if value is not None and not slug_allowed(value):
            errors[name] = [slug_validator.message]
        query[name] = value
    # Checked against the board's dimensions once the season is known (read_segment).
    query["segment"] = params.get("segment") or None
    query["rank_style"] = params.get("rank_style", "ordinal")
    if query["rank_style"] not in selectors.RANK_STYLES:
        errors["rank_style"] = [f"Use one of: {', '.join(selectors.RANK_STYLES)}."]
    for name, (default, low, high, _) in ranges.items():
        raw = params.get(name)
        if raw is None:
            query[name] = default
        elif not _INTEGER.match(raw) or not low <= int(raw) <= high:
            errors[name] = [f"Use a whole number from {low} to {high}."]
        else:
            query[name] = int(raw)
    if errors:
        raise InvalidInput("Invalid query parameters.", details=errors)
    return query


class EntryOut(serializers.Serializer):
    rank = serializers.IntegerField()
    player_id = serializers.CharField()
    display_name = serializers.CharField()
    avatar_url = serializers.CharField(allow_blank=True)
    points = serializers.IntegerField()
    corrected = serializers.BooleanField(
        required=False,
        help_text="Only on a closed season's rows that a correction of its archive changed "
        "(after a ban or a void): true.",
    )


class TopOut(serializers.Serializer):
    board = serializers.CharField()
    season = serializers.CharField()
    segment = serializers.CharField(required=False, help_text="Only in a read within a segment.")
    as_of = serializers.DateTimeField()
    total_players = serializers.IntegerField()
    entries = EntryOut(many=True)


class PlayerRankOut(serializers.Serializer):
    player_id = serializers.CharField()
    board = serializers.CharField()
    season = serializers.CharField()
    segment = serializers.CharField(required=False, help_text="Only in a read within a segment.")
    rank = serializers.IntegerField()
    points = serializers.IntegerField()
    total_players = serializers.IntegerField()
    percentile = serializers.FloatField()
    corrected = serializers.BooleanField(
        required=False,
        help_text="Only on a closed season's rows that a correction of its archive changed "
        "(after a ban or a void): true.",
    )


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
    board = StrictCharField(
        required=False,
        max_length=SLUG_MAX_LENGTH,
        trim_whitespace=False,
        validators=[slug_validator],
    )
    season = StrictCharField(
        required=False,
        max_length=SLUG_MAX_LENGTH,
        trim_whitespace=False,
        validators=[slug_validator],
    )


class RankEntryOut(serializers.Serializer):
    rank = serializers.IntegerField(allow_null=True)
    player_id = serializers.CharField()
    display_name = serializers.CharField()
    avatar_url = serializers.CharField(allow_blank=True)
    points = serializers.IntegerField(allow_null=True)
    corrected = serializers.BooleanField(
        required=False,
        help_text="Only on a closed season's rows that a correction of its archive changed "
        "(after a ban or a void): true.",
    )


class RanksOut(serializers.Serializer):
    board = serializers.CharField()
    season = serializers.CharField()
    segment = serializers.CharField(required=False, help_text="Only in a read within a segment.")
    total_players = serializers.IntegerField()
    entries = RankEntryOut(many=True)


WHOLE_BOARD_PARAMS = [
    BOARD_QUERY,
    SEASON_QUERY,
    OpenApiParameter(
        "rank_style",
        str,
        enum=list(selectors.RANK_STYLES),
        description="ordinal (default, unique ranks) or competition (1-2-2-4).",
    ),
]
_SEASON_PARAMS = [
    *WHOLE_BOARD_PARAMS,
    OpenApiParameter(
        "segment",
        str,
        pattern=f"^({DIMENSION_CHARACTERS}:{SEGMENT_VALUE_CHARACTERS}"
        f"|{CLAN_DIMENSION}:{CLAN_ID_CHARACTERS})?$",
        description="Read within one segment of the board, `dimension:value` (country:DE), or "
        "within one clan's members, `clan:<clan id>`: ranks, `total_players` and `percentile` "
        "are then the segment's. The dimension must be one the board declares (400 "
        "`unknown_segment_dimension`); a malformed one is 400 `invalid_segment`. Empty: the "
        "whole board.",
    ),
]


def query_season(query: dict[str, Any]) -> Season:
    return season_for_read(board_slug=query.get("board"), season_slug=query.get("season"))


def read_segment(query: dict[str, Any], season: Season) -> str | None:
    """The query's segment, as the store names it, checked against the season's board."""
    return segment_parse(query.get("segment"), season.board.segment_dimensions)


# The top's query, and around-me's window (n ranks each side).
TOP_RANGES = {
    "limit": QueryInteger(10, 1, 100),
    "offset": QueryInteger(0, 0, 2**31, "Ranks to skip, "),
}
AROUND_RANGES = {"n": QueryInteger(5, 0, 50, "Ranks each side, ")}


def integer_parameters(ranges: dict[str, QueryInteger]) -> list[OpenApiParameter]:
    return [rule.parameter(name) for name, rule in ranges.items()]


def not_ranked(player_id: str, season: Season, *, banned: bool = False) -> NotFound:
    """A player with no rank: banned from the board (`banned`, which the store remembers per
    season), or without a score."""
    if banned:
        return NotFound(
            f"Player '{player_id}' is banned from season '{season.slug}'.",
            code="player_banned",
        )
    return NotFound(
        f"Player '{player_id}' has no score in season '{season.slug}'.",
        code="player_not_ranked",
    )


def not_in_segment(player_id: str, season: Season, segment: str) -> NotFound:
    """A player with no rank within a segment: not in it, or without a score (or banned)."""
    return NotFound(
        f"Player '{player_id}' has no score in segment '{segment}' of season '{season.slug}'.",
        code="player_not_ranked",
        details={"segment": segment},
    )


class StandingsReadView(APIView):
    """A read of a season's standings. One that finds them lost answers 503 (the exception
    handler) and asks for their rebuild: a season that stands still gets no mirror write to
    find it so (at most one rebuild a while, heals.py)."""

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, selectors.SeasonStandingsLost):
            heals.season_heal_queue_for_read(season_id=exc.season_id)
        return super().handle_exception(exc)


class TopView(StandingsReadView):
    @extend_schema(
        parameters=[
            *_SEASON_PARAMS,
            *integer_parameters(TOP_RANGES),
            OpenApiParameter(
                "If-None-Match",
                str,
                location=OpenApiParameter.HEADER,
                description="The ETag of a copy you hold: 304 while it is still the answer.",
            ),
        ],
        responses={
            200: OpenApiResponse(
                TopOut,
                description="Shared by every reader for up to a second: Cache-Control "
                "(public, max-age), ETag and Last-Modified let HTTP caches keep it.",
            ),
            304: OpenApiResponse(description="The copy named by If-None-Match is current."),
            **errors(404),
        },
        summary="The top of the board (pages through the whole board with offset)",
    )
    def get(self, request: Request) -> HttpResponse:
        query = read_query(request.query_params, **TOP_RANGES)
        season = query_season(query)
        # The shared answer's body is the answer (TopOut documents it), rendered once for every
        # process and reader of the moment.
        answer = top_answers.top_answer(
            season=season,
            offset=query["offset"],
            limit=query["limit"],
            rank_style=query["rank_style"],
            segment=read_segment(query, season),
        )
        headers = top_answers.top_answer_headers(answer)
        if top_answers.top_answer_matches(answer, request.headers.get("If-None-Match")):
            response = HttpResponseNotModified()
        else:
            response = HttpResponse(answer.body, content_type="application/json")
        for name, value in headers:
            response[name] = value
        return response


class PlayerRankView(StandingsReadView):
    @extend_schema(
        parameters=[*_SEASON_PARAMS, PLAYER_ID_PATH],
        responses=PlayerRankOut,
        summary="A player's exact rank, points and percentile",
    )
    def get(self, request: Request, player_id: str) -> Response:
        check_player_id(player_id)
        query = read_query(request.query_params)
        season = query_season(query)
        segment = read_segment(query, season)
        standing = selectors.player_standing(
            season=season, player_id=player_id, rank_style=query["rank_style"], segment=segment
        )
        if standing is None:
            if segment is not None:
                raise not_in_segment(player_id, season, segment)
            raise not_ranked(
                player_id,
                season,
                banned=selectors.player_banned_in(season=season, player_id=player_id),
            )
        return Response(standing)


class AroundView(StandingsReadView):
    @extend_schema(
        parameters=[
            *_SEASON_PARAMS,
            PLAYER_ID_PATH,
            *integer_parameters(AROUND_RANGES),
        ],
        responses=AroundOut,
        summary="The ranks just above and below a player",
    )
    def get(self, request: Request, player_id: str) -> Response:
        check_player_id(player_id)
        query = read_query(request.query_params, **AROUND_RANGES)
        season = query_season(query)
        segment = read_segment(query, season)
        around = selectors.player_around(
            season=season,
            player_id=player_id,
            n=query["n"],
            rank_style=query["rank_style"],
            segment=segment,
        )
        if around is None:
            if segment is not None:
                raise not_in_segment(player_id, season, segment)
            raise not_ranked(
                player_id,
                season,
                banned=selectors.player_banned_in(season=season, player_id=player_id),
            )
        return Response(around)


class RanksView(StandingsReadView):
    @extend_schema(
        parameters=_SEASON_PARAMS,
        request=RanksIn,
        responses={200: RanksOut, **errors(404)},
        summary="Ranks of up to 200 players at once (a friends view)",
    )
    def post(self, request: Request) -> Response:
        query = read_query(request.query_params)
        body = RanksIn(data=request.data)
        if not body.is_valid():
            raise InvalidInput("The request is invalid.", details={"fields": body.errors})
        season = query_season({**query, **{k: v for k, v in body.validated_data.items() if v}})
        player_ids = list(dict.fromkeys(body.validated_data["player_ids"]))
        return Response(
            RanksOut(
                selectors.players_ranks(
                    season=season,
                    player_ids=player_ids,
                    rank_style=query["rank_style"],
                    segment=read_segment(query, season),
                )
            ).data
        )
