"""Public reads of boards and seasons."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.building_blocks.api import SLUG_PATH, IsoDurationField, validate_query
from config.building_blocks.schema import errors
from config.building_blocks.slugs import OPTIONAL_SLUG_PATTERN, SLUG_MAX_LENGTH, slug_validator

from . import selectors
from .choices import ScheduleKind, ScoreOperator, SeasonStatus, SortOrder
from .models import DEFAULT_BOARD, Board, Season

BOARD_QUERY = OpenApiParameter(
    "board",
    str,
    pattern=OPTIONAL_SLUG_PATTERN,
    description=f"Board slug (default: {DEFAULT_BOARD}).",
)


class SeasonOut(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    board = serializers.CharField()
    starts_at = serializers.DateTimeField()
    ends_at = serializers.DateTimeField()
    grace_period = IsoDurationField(help_text="ISO 8601: P0DT01H00M00S is an hour.")
    grace_period_seconds = serializers.IntegerField()
    accepts_results_until = serializers.DateTimeField()
    status = serializers.ChoiceField(choices=SeasonStatus.choices)


class BoardOut(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    score_operator = serializers.ChoiceField(choices=ScoreOperator.choices)
    sort_order = serializers.ChoiceField(choices=SortOrder.choices)
    max_points_per_result = serializers.IntegerField(
        allow_null=True, help_text="Results with more points are refused; null: no limit."
    )
    schedule = serializers.ChoiceField(choices=ScheduleKind.choices)
    schedule_cron = serializers.CharField()
    schedule_timezone = serializers.CharField()
    current_season = SeasonOut(allow_null=True)
    next_season = SeasonOut(allow_null=True)


class BoardQuery(serializers.Serializer):
    # Empty: not given (BOARD_QUERY's pattern).
    board = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=SLUG_MAX_LENGTH,
        trim_whitespace=False,
        validators=[slug_validator],
    )


def season_out(season: Season) -> dict[str, Any]:
    return {
        "slug": season.slug,
        "name": season.name,
        "board": season.board.slug,
        "starts_at": season.starts_at,
        "ends_at": season.ends_at,
        "grace_period": season.grace_period,
        "grace_period_seconds": int(season.grace_period.total_seconds()),
        "accepts_results_until": season.accepts_until,
        "status": season.status_at(timezone.now()),
    }


def board_out(board: Board) -> dict[str, Any]:
    current = selectors.season_current(board=board)
    upcoming = selectors.season_next(board=board)
    return {
        "slug": board.slug,
        "name": board.name,
        "score_operator": board.score_operator,
        "sort_order": board.sort_order,
        "max_points_per_result": board.max_points_per_result,
        "schedule": board.schedule,
        "schedule_cron": board.cron_expression,
        "schedule_timezone": board.schedule_timezone,
        "current_season": season_out(current) if current else None,
        "next_season": season_out(upcoming) if upcoming else None,
    }


def board_query(request: Request) -> str:
    return validate_query(BoardQuery, request.query_params).get("board") or DEFAULT_BOARD


class BoardListView(APIView):
    @extend_schema(responses=BoardOut(many=True), summary="List boards with their seasons")
    def get(self, request: Request) -> Response:
        boards = [board_out(board) for board in selectors.boards_list()]
        return Response(BoardOut(boards, many=True).data)


class SeasonListView(APIView):
    @extend_schema(
        parameters=[BOARD_QUERY],
        responses={200: SeasonOut(many=True), **errors(404)},
        summary="List a board's seasons",
    )
    def get(self, request: Request) -> Response:
        board = selectors.board_get(slug=board_query(request))
        seasons = [season_out(s) for s in selectors.seasons_list(board=board)]
        return Response(SeasonOut(seasons, many=True).data)


class SeasonDetailView(APIView):
    @extend_schema(
        parameters=[BOARD_QUERY, SLUG_PATH],
        responses={200: SeasonOut, **errors(404)},
        summary="One season",
    )
    def get(self, request: Request, slug: str) -> Response:
        season = selectors.season_get(board_slug=board_query(request), season_slug=slug)
        return Response(SeasonOut(season_out(season)).data)
