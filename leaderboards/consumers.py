"""The live leaderboard's WebSocket endpoint: count the socket against its address's cap,
validate the subscription, hand the socket to the live ticker, take the client's follows.

The protocol is documented in docs/websocket.md; the work behind it lives in the live package.
The endpoint is a plain ASGI application under Channels' routing and origin check, not a
Channels consumer: a socket is no channel-layer member of its own (its process's ticker is, and
hands it messages in memory), and a consumer's dispatch loop would keep a task, a wait and a
consumer object per socket for the whole of its life (docs/websocket.md, "What a socket costs").
"""

from __future__ import annotations

import json
from typing import Any

from channels.db import database_sync_to_async
from django.db import DatabaseError
from django.http import QueryDict
from redis.exceptions import RedisError
from rest_framework import serializers

from config.building_blocks.api import StrictCharField, StrictSerializer, validate_query_with
from config.building_blocks.errors import DomainError, InvalidInput, NotFound, Unavailable
from config.building_blocks.player_ids import player_id_field_validator
from config.building_blocks.throttles import scope_client_address
from matches.selectors import player_friends
from seasons.selectors import season_for_read

from . import live
from .segments import segment_parse


class LiveQuery(serializers.Serializer):
    season = serializers.SlugField(required=False, max_length=64)
    top = serializers.IntegerField(min_value=0, max_value=100, default=10)
    player_id = serializers.CharField(
        required=False,
        min_length=1,
        max_length=64,
        trim_whitespace=False,
        validators=[player_id_field_validator],
    )
    n = serializers.IntegerField(min_value=0, max_value=50, default=5)
    friends_of = serializers.CharField(
        required=False,
        min_length=1,
        max_length=64,
        trim_whitespace=False,
        validators=[player_id_field_validator],
    )
    # The clan board's top K to follow (0: none).
    clans = serializers.IntegerField(min_value=0, max_value=100, default=0)
    # Checked against the board's dimensions once the season is known (segments.segment_parse).
    segment = serializers.CharField(required=False, max_length=100, trim_whitespace=False)


# The one LiveQuery every socket's URL is validated with (validate_query_with says why).
LIVE_QUERY = LiveQuery()


class ClientMessage(StrictSerializer):
    action = serializers.ChoiceField(choices=["follow", "unfollow"])
    player_id = StrictCharField(
        min_length=1, max_length=64, trim_whitespace=False, validators=[player_id_field_validator]
    )


async def leaderboard_socket(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """ASGI: one live socket, from its handshake to its close."""
    if (await receive())["type"] != "websocket.connect":
        return
    subscriber = live.Subscriber(send)
    # The address this socket is counted against, once it is (released when it closes).
    counted_address: str | None = None
    try:
        # Accept first: a refused handshake cannot tell the client what was wrong.
        await send({"type": "websocket.accept"})
        address = scope_client_address(scope)
        try:
            live.address_sockets().take(address)
        except DomainError as exc:
            subscriber.reject(exc)
        else:
            counted_address = address
            await _subscribe(subscriber, scope)
        # The routed scope is a copy of the server's: an open socket does not keep it.
        del scope
        while True:
            message = await receive()
            if message["type"] == "websocket.receive":
                _client_message(subscriber, message.get("text"))
            elif message["type"] == "websocket.disconnect":
                return
    finally:
        live.unsubscribe(subscriber)
        if counted_address is not None:
            live.address_sockets().release(counted_address)


async def _subscribe(subscriber: live.Subscriber, scope: dict[str, Any]) -> None:
    """Validate the subscription the URL asks for and start it; a bad one is rejected."""
    try:
        query = validate_query_with(LIVE_QUERY, QueryDict(scope["query_string"]))
        season = await database_sync_to_async(season_for_read)(
            board_slug=scope["url_route"]["kwargs"]["board"],
            season_slug=query.get("season"),
        )
        segment = segment_parse(query.get("segment"), season.board.segment_dimensions)
        friends_of = query.get("friends_of")
        if segment is not None and friends_of is not None:
            raise InvalidInput(
                "A friends view is of the whole board: give segment or friends_of, not both.",
                code="invalid_segment",
            )
        members = None
        if friends_of is not None:
            friend_ids = await database_sync_to_async(player_friends)(friends_of)
            if friend_ids is None:
                raise NotFound(f"Unknown player '{friends_of}'.", code="player_not_found")
            members = [friends_of, *friend_ids]
        await live.subscribe(
            subscriber,
            season=season,
            top=query["top"],
            player_id=query.get("player_id"),
            around=query["n"],
            friends_of=friends_of,
            friends_members=members,
            segment=segment,
            clans=query["clans"],
        )
    except DomainError as exc:
        subscriber.reject(exc)
    except (DatabaseError, RedisError):
        subscriber.reject(Unavailable("The service is temporarily unavailable; retry shortly."))


def _client_message(subscriber: live.Subscriber, text: str | None) -> None:
    """A `follow` or `unfollow` from the client; anything else is answered with an error."""
    message: Any = None
    if text is not None:
        try:
            message = json.loads(text)
        except ValueError:
            message = None
    body = ClientMessage(data=message)
    if not body.is_valid():
        subscriber.error(InvalidInput("The message is invalid.", details=body.errors))
        return
    try:
        if body.validated_data["action"] == "follow":
            live.follow(subscriber, body.validated_data["player_id"])
        else:
            live.unfollow(subscriber, body.validated_data["player_id"])
    except DomainError as exc:
        subscriber.error(exc)
