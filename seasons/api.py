"""Public reads of boards and seasons."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.building_blocks.api import SLUG_PATH, validate_query
from config.building_blocks.slugs import OPTIONAL_SLUG_PATTERN

from . import selectors
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
    grace_period = serializers.DurationField()
    grace_period_seconds = serializers.IntegerField()
    accepts_results_until = serializers.DateTimeField()
    status = serializers.ChoiceField(choices=["scheduled", "running", "closing", "closed"])


class BoardOut(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    score_operator = serializers.CharField()
    sort_order = serializers.CharField()
    max_points_per_result = serializers.IntegerField(
        allow_null=True, help_text="Results with more points are refused; null: no limit."
    )
    schedule = serializers.CharField()
    schedule_cron = serializers.CharField()
    schedule_timezone = serializers.CharField()
    current_season = SeasonOut(allow_null=True)
    next_season = SeasonOut(allow_null=True)


class BoardQuery(serializers.Serializer):
    board = serializers.SlugField(required=False, max_length=64)


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
        parameters=[BOARD_QUERY], responses=SeasonOut(many=True), summary="List a board's seasons"
    )
    def get(self, request: Request) -> Response:
        board = selectors.board_get(slug=board_query(request))
        seasons = [season_out(s) for s in selectors.seasons_list(board=board)]
        return Response(SeasonOut(seasons, many=True).data)


class SeasonDetailView(APIView):
    @extend_schema(parameters=[BOARD_QUERY, SLUG_PATH], responses=SeasonOut, summary="One season")
    def get(self, request: Request, slug: str) -> Response:
        season = selectors.season_get(board_slug=board_query(request), season_slug=slug)
        return Response(SeasonOut(season_out(season)).data)
