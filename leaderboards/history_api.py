"""Public reads of what was: a player's seasons (live ranks, then final ones, with corrections'
marks) and a closed season's rewards, a page at a time."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.building_blocks.api import PLAYER_ID_PATH, SLUG_PATH, validate_query
from config.building_blocks.player_ids import (
    OPTIONAL_PLAYER_ID_PATTERN,
    check_player_id,
    player_id_field_validator,
)
from config.building_blocks.schema import errors
from seasons.api import BOARD_QUERY, BoardQuery
from seasons.models import DEFAULT_BOARD, SeasonStatus
from seasons.selectors import season_get

from . import history, selectors
from .api import StandingsReadView


class PlayerSeasonRowOut(serializers.Serializer):
    board = serializers.CharField()
    season = serializers.CharField()
    season_name = serializers.CharField()
    status = serializers.ChoiceField(choices=SeasonStatus.choices)
    ends_at = serializers.DateTimeField()
    rank = serializers.IntegerField(
        allow_null=True,
        help_text="The live rank, or the final one once closed; null off the board.",
    )
    final_rank = serializers.IntegerField(allow_null=True, help_text="Null until closed.")
    competition_rank = serializers.IntegerField(allow_null=True)
    points = serializers.IntegerField()
    total_players = serializers.IntegerField(allow_null=True)
    reward = serializers.CharField(allow_null=True)
    corrected = serializers.BooleanField(
        help_text="A closed season's standing that a correction of its archive changed after "
        "the close (a ban or a void above or of the player); false otherwise."
    )
    closed_rank = serializers.IntegerField(
        allow_null=True,
        help_text="On a corrected standing, the rank the close gave (null: not archived at "
        "the close); null otherwise.",
    )


class PlayerSeasonsOut(serializers.Serializer):
    player_id = serializers.CharField()
    seasons = PlayerSeasonRowOut(many=True)


class PlayerSeasonsView(StandingsReadView):
    @extend_schema(
        parameters=[PLAYER_ID_PATH],
        responses={200: PlayerSeasonsOut, **errors(400)},
        summary="A player's seasons: the running ones with their live rank, then the closed ones",
    )
    def get(self, request: Request, player_id: str) -> Response:
        check_player_id(player_id)
        rows = selectors.player_seasons(player_id=player_id)
        return Response(PlayerSeasonsOut({"player_id": player_id, "seasons": rows}).data)


class RewardOut(serializers.Serializer):
    player_id = serializers.CharField()
    rank = serializers.IntegerField(help_text="The final rank (within the segment, if any).")
    reward_code = serializers.CharField()
    awarded_at = serializers.DateTimeField()
    segment = serializers.CharField(
        required=False,
        help_text="The segment (`country:DE`) whose tier gave the reward; only on those, not on "
        "the whole board's.",
    )


class RewardsOut(serializers.Serializer):
    board = serializers.CharField()
    season = serializers.CharField()
    rewards = RewardOut(many=True)
    next_offset = serializers.IntegerField(
        allow_null=True, help_text="The offset of the next page; null after the last one."
    )


REWARDS_PAGE_MAX = 1000


class RewardsQuery(BoardQuery):
    # Empty: not given (the parameter's pattern).
    player_id = serializers.CharField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        validators=[player_id_field_validator],
    )
    limit = serializers.IntegerField(min_value=1, max_value=REWARDS_PAGE_MAX, default=100)
    offset = serializers.IntegerField(min_value=0, max_value=2**31, default=0)


class SeasonRewardsView(APIView):
    @extend_schema(
        parameters=[
            BOARD_QUERY,
            SLUG_PATH,
            OpenApiParameter(
                "player_id", str, pattern=OPTIONAL_PLAYER_ID_PATTERN, description="One player."
            ),
            OpenApiParameter(
                "limit",
                {"type": "integer", "minimum": 1, "maximum": REWARDS_PAGE_MAX},
                description=f"Rewards per page, 1-{REWARDS_PAGE_MAX:,}, default 100.",
            ),
            OpenApiParameter(
                "offset",
                {"type": "integer", "minimum": 0, "maximum": 2**31},
                description="Rewards to skip, default 0 (`next_offset` of the previous page).",
            ),
        ],
        responses={200: RewardsOut, **errors(409)},
        summary="The rewards of a closed season, by rank, a page at a time (the whole board's, "
        "then each segment's)",
    )
    def get(self, request: Request, slug: str) -> Response:
        query = validate_query(RewardsQuery, request.query_params)
        season = season_get(board_slug=query.get("board") or DEFAULT_BOARD, season_slug=slug)
        page = history.season_rewards(
            season=season,
            offset=query["offset"],
            limit=query["limit"],
            player_id=query.get("player_id") or None,
        )
        return Response(
            RewardsOut({"board": season.board.slug, "season": season.slug, **page}).data
        )
