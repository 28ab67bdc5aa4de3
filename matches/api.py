"""The game servers' write API (results, profiles) and public profile reads."""

from __future__ import annotations

from datetime import UTC
from typing import Any

from django.utils.dateparse import parse_datetime
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import PLAYER_ID_PATH, StrictCharField, StrictIntegerField, StrictSerializer
from config.errors import InvalidInput, NotFound
from config.player_ids import (
    PLAYER_ID_MAX_LENGTH,
    check_player_id,
    player_id_allowed,
    player_id_field_validator,
)
from seasons.scoring import MAX_POINTS

from . import services
from .models import Player
from .permissions import GameServerKeyAuthentication, IsGameServer, allowed_board_slugs

MAX_BATCH = 1000


def _printable(value: str) -> None:
    if not value.isprintable():
        raise serializers.ValidationError("Use printable characters only.")


class ResultIn(StrictSerializer):
    player_id = StrictCharField(
        min_length=1,
        max_length=PLAYER_ID_MAX_LENGTH,
        trim_whitespace=False,
        validators=[player_id_field_validator],
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


_RESULT_FIELDS = frozenset(ResultIn().fields)
_MISSING = object()


def _text(
    data: dict[str, Any],
    name: str,
    errors: dict[str, list[str]],
    *,
    max_length: int,
    required: bool,
) -> str | None:
    value = data.get(name, _MISSING)
    if value is _MISSING:
        if required:
            errors[name] = ["This field is required."]
        return None
    if not isinstance(value, str):
        errors[name] = ["Must be a JSON string."]
    elif not value:
        errors[name] = ["This field may not be blank."]
    elif len(value) > max_length:
        errors[name] = [f"Ensure this field has no more than {max_length} characters."]
    else:
        return value
    return None


def _parse_item(data: Any) -> tuple[services.ResultIn | None, dict[str, list[str]] | None]:
    """Validate one result exactly as the ResultIn serializer documents it.

    Written out by hand because it is the ingest hot path: the serializer spent two thirds of a
    100-result batch's time in the web process (measured with py-spy in the benchmark).
    """
    if not isinstance(data, dict):
        return None, {"non_field_errors": ["Expected a JSON object."]}
    errors: dict[str, list[str]] = {
        name: ["Unknown field."] for name in sorted(data.keys() - _RESULT_FIELDS)
    }
    player_id = _text(data, "player_id", errors, max_length=PLAYER_ID_MAX_LENGTH, required=True)
    if player_id is not None and not player_id_allowed(player_id):
        errors["player_id"] = [player_id_field_validator.message]
    match_id = _text(data, "match_id", errors, max_length=128, required=True)
    if match_id is not None and not match_id.isprintable():
        errors["match_id"] = ["Use printable characters only."]
    board = _text(data, "board", errors, max_length=64, required=False)
    season = _text(data, "season", errors, max_length=64, required=False)
    points = data.get("points", _MISSING)
    if points is _MISSING:
        errors["points"] = ["This field is required."]
    elif isinstance(points, bool) or not isinstance(points, int):
        errors["points"] = ["Must be a JSON integer."]
    elif not 1 <= points <= MAX_POINTS:
        errors["points"] = [f"Must be from 1 to {MAX_POINTS}."]
    ended_at = data.get("ended_at", _MISSING)
    if ended_at is _MISSING:
        ended_at = None
    else:
        try:
            parsed = parse_datetime(ended_at) if isinstance(ended_at, str) else None
        except ValueError:
            parsed = None
        if parsed is None:
            errors["ended_at"] = ["Use ISO 8601, e.g. 2026-11-30T12:00:00Z."]
        else:
            ended_at = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    if errors:
        return None, errors
    return services.ResultIn(
        player_id=player_id,
        points=points,
        match_id=match_id,
        board=board,
        season=season,
        ended_at=ended_at,
    ), None


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
            results=[result], allowed_boards=allowed_board_slugs(self.request)
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
            results=results, batch=True, allowed_boards=allowed_board_slugs(self.request)
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
