"""WebSocket consumers: count the socket against its address's cap, validate the subscription,
hand the socket to the live ticker, forward.

The protocol is documented in docs/websocket.md; the work behind it lives in the live package.
"""

from __future__ import annotations

import json
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.db import DatabaseError
from django.http import QueryDict
from redis.exceptions import RedisError
from rest_framework import serializers

from config.building_blocks.api import StrictCharField, StrictSerializer, validate_query
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


class ClientMessage(StrictSerializer):
    action = serializers.ChoiceField(choices=["follow", "unfollow"])
    player_id = StrictCharField(
        min_length=1, max_length=64, trim_whitespace=False, validators=[player_id_field_validator]
    )


class LeaderboardConsumer(AsyncWebsocketConsumer):
    # A socket is no channel-layer member of its own: its process's ticker is, and hands it
    # messages in memory, so ten thousand sockets cost no channel-layer traffic.
    channel_layer_alias = None

    async def connect(self) -> None:
        self.subscriber = live.Subscriber(
            send=lambda text: self.send(text_data=text), close=lambda code: self.close(code)
        )
        # The address this socket is counted against, once it is (see disconnect).
        self.counted_address: str | None = None
        # Accept first: a refused handshake cannot tell the client what was wrong.
        await self.accept()
        try:
            address = scope_client_address(self.scope)
            live.address_sockets().take(address)
            self.counted_address = address
            query = validate_query(LiveQuery, QueryDict(self.scope["query_string"]))
            season = await database_sync_to_async(season_for_read)(
                board_slug=self.scope["url_route"]["kwargs"]["board"],
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
                self.subscriber,
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
            self.subscriber.reject(exc)
        except (DatabaseError, RedisError):
            self.subscriber.reject(
                Unavailable("The service is temporarily unavailable; retry shortly.")
            )

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        message: Any = None
        if text_data is not None:
            try:
                message = json.loads(text_data)
            except ValueError:
                message = None
        body = ClientMessage(data=message)
        if not body.is_valid():
            self.subscriber.error(InvalidInput("The message is invalid.", details=body.errors))
            return
        try:
            if body.validated_data["action"] == "follow":
                live.follow(self.subscriber, body.validated_data["player_id"])
            else:
                live.unfollow(self.subscriber, body.validated_data["player_id"])
        except DomainError as exc:
            self.subscriber.error(exc)

    async def disconnect(self, code: int) -> None:
        live.unsubscribe(self.subscriber)
        if self.counted_address is not None:
            live.address_sockets().release(self.counted_address)
            self.counted_address = None
