"""Who may write: game servers holding a key that is neither revoked nor expired."""

from __future__ import annotations

import hashlib
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions, permissions
from rest_framework.request import Request
from rest_framework_api_key.permissions import KeyParser

from config.building_blocks.caching import RecentAnswers

from .models import GameServer

# Keys verified recently, by a digest of the key: a game server posting hundreds of times a
# second would otherwise cost two queries a request (the key, then its boards). A revoked key
# or a change of its boards takes effect within GAME_SERVER_KEY_CACHE_SECONDS; expiry is checked
# on every request. Unknown keys raise, so only real keys are kept.
verified_keys_cache: RecentAnswers[tuple[GameServer, frozenset[str] | None]] = RecentAnswers(
    seconds=lambda: settings.GAME_SERVER_KEY_CACHE_SECONDS, maxsize=lambda: 1024
)


def _verify(key: str) -> tuple[GameServer, frozenset[str] | None]:
    try:
        server = GameServer.objects.get_from_key(key)
    except GameServer.DoesNotExist:
        raise exceptions.AuthenticationFailed("Unknown or revoked game-server key.") from None
    slugs = frozenset(server.boards.values_list("slug", flat=True))
    return server, slugs or None


class GameServerKeyAuthentication(authentication.BaseAuthentication):
    """`Authorization: Api-Key <key>`, checked against its hash and reused for a few seconds.
    A missing key is 401 with `WWW-Authenticate: Api-Key`."""

    key_parser = KeyParser()

    def authenticate(self, request: Request) -> tuple[Any, GameServer] | None:
        key = self.key_parser.get(request)
        if not key:
            # A key sent with another scheme (many clients' default is Bearer) is not "no
            # credentials": say which scheme this service expects.
            scheme = request.META.get("HTTP_AUTHORIZATION", "").split(" ", 1)[0]
            if scheme:
                raise exceptions.AuthenticationFailed(
                    f"Send the game-server key as 'Authorization: Api-Key <key>'; the "
                    f"'{scheme[:20]}' scheme is not accepted."
                )
            return None
        digest = hashlib.sha256(key.encode()).hexdigest()
        hit = verified_keys_cache.get_or_build(digest, lambda: _verify(key))
        server, boards = hit
        if server.has_expired:
            raise exceptions.AuthenticationFailed("This game-server key has expired.")
        request.allowed_boards = boards
        return AnonymousUser(), server

    def authenticate_header(self, request: Request) -> str:
        return "Api-Key"


class IsGameServer(permissions.BasePermission):
    message = "A game-server key is required."

    def has_permission(self, request: Request, view: Any) -> bool:
        return isinstance(request.auth, GameServer)


def allowed_board_slugs(request: Request) -> frozenset[str] | None:
    """The boards the request's key may write to (results, and the profiles of players with
    results there), or None for every board."""
    return getattr(request, "allowed_boards", None)


class GameServerKeyScheme(OpenApiAuthenticationExtension):
    """Tells the OpenAPI schema how game servers authenticate."""

    target_class = GameServerKeyAuthentication
    name = "GameServerKey"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Api-Key <key>` (create one with `manage.py create_game_server`).",
        }
