"""The game servers' write API (results, profiles) and public profile reads."""

from __future__ import annotations

from typing import Any

from django.core.validators import RegexValidator
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
)
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.building_blocks.api import PLAYER_ID_PATH, StrictCharField, StrictSerializer
from config.building_blocks.errors import InvalidInput, NotFound
from config.building_blocks.input_rules import (
    Batch,
    BodyRules,
    Instant,
    Integer,
    Text,
    printable_validator,
)
from config.building_blocks.player_ids import (
    PLAYER_ID_MAX_LENGTH,
    check_player_id,
    player_id_field_validator,
)
from config.building_blocks.schema import errors
from config.building_blocks.segments import (
    CLAN_ID_PATTERN,
    RESERVED_CLAN_IDS,
    SEGMENT_VALUE_RULE,
    clan_id_allowed,
    clan_id_validator,
    dimension_validator,
    segment_value_validator,
)
from config.building_blocks.slugs import SLUG_MAX_LENGTH, slug_validator
from seasons.scoring import MAX_POINTS

from . import selectors, services
from .models import FRIENDS_MAX, Clan, Player
from .permissions import GameServerKeyAuthentication, IsGameServer, allowed_board_slugs

MAX_BATCH = 1000
CLAN_ID_PATH = OpenApiParameter(
    "clan_id", str, OpenApiParameter.PATH, pattern=CLAN_ID_PATTERN, description="The clan's id."
)

# A posted result: the one definition of what POST /api/v1/scores takes, read by the fast
# check of every item and, as the ResultIn serializer, by the schema.
RESULT_RULES = BodyRules(
    {
        "player_id": Text(PLAYER_ID_MAX_LENGTH, validators=(player_id_field_validator,)),
        "points": Integer(1, MAX_POINTS),
        "match_id": Text(128, validators=(printable_validator,)),
        "board": Text(SLUG_MAX_LENGTH, required=False, validators=(slug_validator,)),
        "season": Text(SLUG_MAX_LENGTH, required=False, validators=(slug_validator,)),
        "ended_at": Instant(required=False),
    }
)
ResultIn = RESULT_RULES.serializer("ResultIn", "One match result of one player.")


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


def _posted_result(data: Any) -> tuple[services.PostedResult | None, dict[str, list[str]] | None]:
    """One result checked by RESULT_RULES: the result, or each field's errors."""
    values, errors = RESULT_RULES.parse(data)
    if values is None:
        return None, errors
    return services.PostedResult(**values), None


class ResultBatchIn(Batch):
    item = ResultIn
    max_items = MAX_BATCH


class ResultBatchOut(Batch):
    item = ResultOut
    max_items = MAX_BATCH


# Both forms the endpoint takes, and both forms of its 200 answer, for the schema.
_RESULT_OR_BATCH_IN = PolymorphicProxySerializer(
    component_name="ResultOrBatchIn",
    serializers=[ResultIn, ResultBatchIn],
    resource_type_field_name=None,
)
_RESULT_OR_BATCH_OUT = PolymorphicProxySerializer(
    component_name="ResultOrBatchOut",
    serializers=[ResultOut, ResultBatchOut],
    resource_type_field_name=None,
)


class ScoresView(APIView):
    authentication_classes = [GameServerKeyAuthentication]
    permission_classes = [IsGameServer]

    @extend_schema(
        request=_RESULT_OR_BATCH_IN,
        responses={
            **errors(403, 404, 409),
            201: OpenApiResponse(ResultOut, description="One result, accepted."),
            200: OpenApiResponse(
                _RESULT_OR_BATCH_OUT,
                description="One result already recorded (a duplicate), or a batch: one outcome "
                "per item, in order (a batch commits all or nothing).",
            ),
        },
        summary=f"Post one match result, or a JSON array of 1 to {MAX_BATCH:,}",
    )
    def post(self, request: Request) -> Response:
        body = request.data
        if isinstance(body, list):
            return self._batch(body)
        result, errors = _posted_result(body)
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
        results: list[services.PostedResult] = []
        invalid: list[dict[str, Any]] = []
        for index, item in enumerate(body):
            result, errors = _posted_result(item)
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


# The pages load avatars over https only (their Content-Security-Policy, CSP_AVATAR_SOURCES):
# an address they could not show is refused here rather than drawn as a broken image. The rule
# is this one pattern, which the schema shows as it is (a URL validator's rules could not be
# stated there): https, a host name of dot-separated labels of 1-63 letters, digits or '-' (not
# at either end) whose last starts with a letter, an optional port, and an optional path and
# query of the characters RFC 3986 allows (anything else percent-encoded). Empty: no avatar.
_HOST_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_TOP_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_URI_CHARACTER = r"(?:[A-Za-z0-9._~!$&'()*+,;=:@/?-]|%[0-9A-Fa-f]{2})"
AVATAR_URL_MAX_LENGTH = 500
avatar_url_validator = RegexValidator(
    rf"\A(?:https://(?:{_HOST_LABEL}\.)+{_TOP_LABEL}(?::[0-9]{{1,5}})?(?:/{_URI_CHARACTER}*)?)?\Z",
    "Enter an https:// address: the pages show no other avatars.",
)
# Names are shown on the pages: printable, as match ids are (an empty one shows the id), and
# kept as sent (no trimming), so that what the schema's pattern admits is what is stored.
_name_validators = [printable_validator]


class PlayerIn(StrictSerializer):
    display_name = StrictCharField(
        required=False,
        max_length=100,
        allow_blank=True,
        trim_whitespace=False,
        validators=_name_validators,
    )
    avatar_url = StrictCharField(
        required=False,
        max_length=AVATAR_URL_MAX_LENGTH,
        allow_blank=True,
        trim_whitespace=False,
        validators=[avatar_url_validator],
        help_text="An https:// address of the player's picture; empty: none.",
    )
    clan = StrictCharField(
        required=False,
        allow_null=True,
        max_length=64,
        trim_whitespace=False,
        validators=[clan_id_validator],
        help_text="The player's clan (it must exist: PUT /api/v1/clans/{clan_id}); null leaves it.",
    )
    segments = serializers.DictField(
        child=StrictCharField(
            allow_null=True,
            max_length=32,
            trim_whitespace=False,
            validators=[segment_value_validator],
        ),
        required=False,
        help_text=f'Values by segment dimension, such as {{"country": "DE"}}: each value '
        f"{SEGMENT_VALUE_RULE}; null removes the player's value in that dimension. Each "
        "dimension must be declared by a board (its segment dimensions).",
    )

    def validate_segments(self, segments: dict[str, str | None]) -> dict[str, str | None]:
        if len(segments) > MAX_SEGMENTS_PER_WRITE:
            raise serializers.ValidationError(
                f"At most {MAX_SEGMENTS_PER_WRITE} dimensions in one write."
            )
        for dimension in segments:
            dimension_validator(dimension)
        return segments


# Dimensions one profile write may set (boards declare at most MAX_DIMENSIONS each).
MAX_SEGMENTS_PER_WRITE = 16


class PlayerOut(serializers.Serializer):
    player_id = serializers.CharField()
    display_name = serializers.CharField()
    avatar_url = serializers.CharField()
    clan = serializers.CharField(
        required=False, allow_null=True, help_text="Present once the player was given a clan."
    )
    segments = serializers.DictField(
        child=serializers.CharField(),
        required=False,
        help_text="Present once the player was given segment values.",
    )


def _player_out(player: Player, *, memberships: bool = False) -> dict[str, Any]:
    """The profile; with its clan and segments when asked (the write set them) or when the
    player has any, so a player without them reads exactly as before they existed."""
    out = {
        "player_id": player.player_id,
        "display_name": player.display_name or player.player_id,
        "avatar_url": player.avatar_url,
    }
    held = services.player_memberships(player)
    if memberships or held["clan"] is not None or held["segments"]:
        out.update(held)
    return out


class GameServerWritesView(APIView):
    """Anyone reads (GET); only a game server's key writes (PUT)."""

    authentication_classes = [GameServerKeyAuthentication]

    def get_permissions(self) -> list[Any]:
        if self.request.method == "PUT":
            return [IsGameServer()]
        return []


class PlayerView(GameServerWritesView):
    @extend_schema(
        parameters=[PLAYER_ID_PATH],
        responses={200: PlayerOut, **errors(400)},
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
        responses={200: PlayerOut, 201: PlayerOut, **errors(403)},
        summary="Create or update a player's profile (game servers)",
        description="A key limited to some boards may write only the profile of a player with "
        "a result on one of them (`403 player_not_in_scope` otherwise).",
    )
    def put(self, request: Request, player_id: str) -> Response:
        check_player_id(player_id)
        serializer = PlayerIn(data=request.data)
        if not serializer.is_valid():
            raise InvalidInput("The profile is invalid.", details={"fields": serializer.errors})
        given = serializer.validated_data
        player, created = services.player_upsert(
            player_id=player_id, allowed_boards=allowed_board_slugs(request), **given
        )
        return Response(
            _player_out(player, memberships="clan" in given or "segments" in given),
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )


class FriendsIn(StrictSerializer):
    friends = serializers.ListField(
        child=StrictCharField(
            min_length=1,
            max_length=PLAYER_ID_MAX_LENGTH,
            trim_whitespace=False,
            validators=[player_id_field_validator],
        ),
        allow_empty=True,
        help_text=f"The player's whole list of friends' ids, at most {FRIENDS_MAX:,}; "
        "it replaces the stored one. Friends who have not played yet are allowed.",
    )


class FriendsOut(serializers.Serializer):
    player_id = serializers.CharField()
    friends = serializers.ListField(child=serializers.CharField())


class FriendsView(GameServerWritesView):
    @extend_schema(
        parameters=[PLAYER_ID_PATH],
        responses={200: FriendsOut, **errors(400)},
        auth=[],
        summary="A player's friends, as stored",
    )
    def get(self, request: Request, player_id: str) -> Response:
        check_player_id(player_id)
        friends = selectors.player_friends(player_id)
        if friends is None:
            raise NotFound(f"Unknown player '{player_id}'.", code="player_not_found")
        return Response({"player_id": player_id, "friends": friends})

    @extend_schema(
        parameters=[PLAYER_ID_PATH],
        request=FriendsIn,
        responses={200: FriendsOut, **errors(403)},
        summary="Replace a player's friends (game servers)",
        description=f"One-way (the player's own list), at most {FRIENDS_MAX:,} ids "
        "(`400 too_many_friends`), never the player's own (`400 friend_is_self`); an id given "
        "twice is kept once. The player is created when new. A key limited to some boards may "
        "write only the friends of a player with a result on one of them "
        "(`403 player_not_in_scope`).",
    )
    def put(self, request: Request, player_id: str) -> Response:
        check_player_id(player_id)
        body = request.data
        # Counted before each id is checked: a list far over the limit gets its one clear error.
        if isinstance(body, dict) and isinstance(body.get("friends"), list):
            services.friends_limit_check([repr(friend) for friend in body["friends"]])
        serializer = FriendsIn(data=body)
        if not serializer.is_valid():
            raise InvalidInput(
                "The friends list is invalid.", details={"fields": serializer.errors}
            )
        friends = services.friends_replace(
            player_id=player_id,
            friend_ids=serializer.validated_data["friends"],
            allowed_boards=allowed_board_slugs(request),
        )
        return Response({"player_id": player_id, "friends": friends})


class ClanIn(StrictSerializer):
    name = StrictCharField(
        required=False,
        max_length=100,
        allow_blank=True,
        trim_whitespace=False,
        validators=_name_validators,
    )


class ClanOut(serializers.Serializer):
    clan_id = serializers.CharField()
    name = serializers.CharField()
    members = serializers.IntegerField(help_text="Players in the clan now.")


class ClanView(GameServerWritesView):
    @extend_schema(
        parameters=[CLAN_ID_PATH], responses=ClanOut, auth=[], summary="A clan and its size"
    )
    def get(self, request: Request, clan_id: str) -> Response:
        clan = Clan.objects.filter(clan_id=clan_id).first() if clan_id_allowed(clan_id) else None
        if clan is None:
            raise NotFound(f"Unknown clan '{clan_id}'.", code="clan_not_found")
        return Response(_clan_out(clan))

    @extend_schema(
        parameters=[CLAN_ID_PATH],
        request=ClanIn,
        responses={200: ClanOut, 201: ClanOut},
        summary="Create or rename a clan (game servers)",
        description="Players join with the profile write (`PUT /api/v1/players/{player_id}` "
        '`{"clan": "clan-id"}`, null to leave).',
    )
    def put(self, request: Request, clan_id: str) -> Response:
        if not clan_id_allowed(clan_id):
            raise InvalidInput(clan_id_validator.message, code="invalid_clan_id")
        if clan_id in RESERVED_CLAN_IDS:
            # GET /api/v1/leaderboard/clans/top is the clan board's top, not this clan.
            raise InvalidInput(
                f"'{clan_id}' is the clan board's own address: choose another id.",
                code="invalid_clan_id",
            )
        body = ClanIn(data=request.data)
        if not body.is_valid():
            raise InvalidInput("The clan is invalid.", details={"fields": body.errors})
        clan, created = services.clan_upsert(clan_id=clan_id, **body.validated_data)
        return Response(
            _clan_out(clan), status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )


def _clan_out(clan: Clan) -> dict[str, Any]:
    return {
        "clan_id": clan.clan_id,
        "name": clan.name or clan.clan_id,
        "members": clan.members.count(),
    }
