"""The game servers' write API (results, profiles) and public profile reads."""

from __future__ import annotations

from typing import Any

from django.core.validators import RegexValidator
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import PLAYER_ID_PATH, StrictCharField, StrictIntegerField, StrictSerializer
from config.errors import InvalidInput, NotFound

from . import services
from .models import MAX_POINTS, PLAYER_ID_PATTERN, Player
from .permissions import GameServerKeyAuthentication, IsGameServer, allowed_board_slugs

MAX_BATCH = 1000

player_id_field_validator = RegexValidator(
    PLAYER_ID_PATTERN, "Use 1-64 characters of A-Z, a-z, 0-9, '_', '.' or '-'."
)


def _printable(value: str) -> None:
    if not value.isprintable():
        raise serializers.ValidationError("Use printable characters only.")


class ResultIn(StrictSerializer):
    player_id = StrictCharField(
        min_length=1, max_length=64, trim_whitespace=False, validators=[player_id_field_validator]
    )
    points = StrictIntegerField(min_value=1, max_value=MAX_POINTS)
    match_id = StrictCharField(
        min_length=1, max_length=128, trim_whitespace=False, validators=[_printable]
    )
    board = StrictCharField(required=False, max_length=64)
    season = StrictCharField(required=False, max_length=64)
    # ISO 8601; a time without an offset is taken as UTC.
    ended_at = serializers.DateTimeField(required=False)


class ResultOut(serializers.Serializer):
    status = serializers.ChoiceField(choices=["accepted", "duplicate"])
    match_id = serializers.CharField()
    player_id = serializers.CharField()
    board = serializers.CharField()
    season = serializers.CharField()
    points = serializers.IntegerField()
    total_points = serializers.IntegerField()


def _result_out(outcome: services.ResultOutcome) -> dict[str, Any]:
    return {
        "status": outcome.status,
        "match_id": outcome.match_id,
        "player_id": outcome.player_id,
        "board": outcome.board,
        "season": outcome.season,
        "points": outcome.points,
        "total_points": outcome.total_points,
    }


def _parse_item(data: Any) -> tuple[services.ResultIn | None, Any]:
    serializer = ResultIn(data=data)
    if not serializer.is_valid():
        return None, serializer.errors
    return services.ResultIn(**serializer.validated_data), None


class ScoresView(APIView):
    authentication_classes = [GameServerKeyAuthentication]
    permission_classes = [IsGameServer]

    @extend_schema(
        request=ResultIn,
        responses={
            201: ResultOut,
            200: OpenApiResponse(ResultOut, description="Duplicate, or a batch (one per item)."),
        },
        summary="Post one match result, or a JSON array of up to 1,000",
    )
    def post(self, request: Request) -> Response:
        body = request.data
        if isinstance(body, list):
            return self._batch(body)
        result, errors = _parse_item(body)
        if errors is not None:
            raise InvalidInput("The result is invalid.", details={"fields": errors})
        (outcome,) = services.results_record(
            results=[result], allowed_boards=allowed_board_slugs(self.request.auth)
        )
        code = status.HTTP_201_CREATED if outcome.status == "accepted" else status.HTTP_200_OK
        return Response(_result_out(outcome), status=code)

    def _batch(self, body: list[Any]) -> Response:
        if not body:
            raise InvalidInput("A batch needs at least one result.", code="empty_batch")
        if len(body) > MAX_BATCH:
            raise InvalidInput(
                f"A batch holds at most {MAX_BATCH} results; got {len(body)}.",
                code="batch_too_large",
                details={"max_items": MAX_BATCH, "items": len(body)},
            )
        results: list[services.ResultIn] = []
        invalid: list[dict[str, Any]] = []
        for index, item in enumerate(body):
            result, errors = _parse_item(item)
            if errors is not None:
                invalid.append({"index": index, "fields": errors})
            elif result is not None:
                results.append(result)
        if invalid:
            raise InvalidInput(
                f"Item {invalid[0]['index']} is invalid; nothing was written.",
                details={"index": invalid[0]["index"], "items": invalid},
            )
        outcomes = services.results_record(
            results=results, batch=True, allowed_boards=allowed_board_slugs(self.request.auth)
        )
        return Response([_result_out(o) for o in outcomes], status=status.HTTP_200_OK)


class PlayerIn(StrictSerializer):
    display_name = StrictCharField(required=False, max_length=100, allow_blank=True)
    avatar_url = serializers.URLField(required=False, max_length=500, allow_blank=True)


class PlayerOut(serializers.Serializer):
    player_id = serializers.CharField()
    display_name = serializers.CharField()
    avatar_url = serializers.CharField()


def _player_out(player: Player) -> dict[str, Any]:
    return {
        "player_id": player.player_id,
        "display_name": player.display_name or player.player_id,
        "avatar_url": player.avatar_url,
    }


def check_player_id(player_id: str) -> None:
    try:
        player_id_field_validator(player_id)
    except Exception as exc:
        raise InvalidInput(
            "A player id is 1-64 characters of A-Z, a-z, 0-9, '_', '.' or '-'.",
            code="invalid_player_id",
        ) from exc


class PlayerView(APIView):
    authentication_classes = [GameServerKeyAuthentication]

    def get_permissions(self) -> list[Any]:
        if self.request.method == "PUT":
            return [IsGameServer()]
        return []

    @extend_schema(
        parameters=[PLAYER_ID_PATH],
        responses=PlayerOut,
        auth=[],
        summary="A player's public profile",
    )
    def get(self, request: Request, player_id: str) -> Response:
        check_player_id(player_id)
        player = Player.objects.filter(player_id=player_id).first()
        if player is None:
            raise NotFound(f"Unknown player '{player_id}'.", code="player_not_found")
        return Response(_player_out(player))

    @extend_schema(
        parameters=[PLAYER_ID_PATH],
        request=PlayerIn,
        responses={200: PlayerOut, 201: PlayerOut},
        summary="Create or update a player's profile (game servers)",
    )
    def put(self, request: Request, player_id: str) -> Response:
        check_player_id(player_id)
        serializer = PlayerIn(data=request.data)
        if not serializer.is_valid():
            raise InvalidInput("The profile is invalid.", details={"fields": serializer.errors})
        player, created = services.player_upsert(player_id=player_id, **serializer.validated_data)
        return Response(
            _player_out(player), status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )
