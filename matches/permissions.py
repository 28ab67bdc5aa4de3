"""Who may write: game servers holding a key that is neither revoked nor expired."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AnonymousUser
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions, permissions
from rest_framework.request import Request
from rest_framework_api_key.permissions import KeyParser

from .models import GameServer


class GameServerKeyAuthentication(authentication.BaseAuthentication):
    """`Authorization: Api-Key <key>`, checked against its hash on every request (so a revoked
    key fails at once). A missing key is 401 with `WWW-Authenticate: Api-Key`."""

    key_parser = KeyParser()

    def authenticate(self, request: Request) -> tuple[Any, GameServer] | None:
        key = self.key_parser.get(request)
        if not key:
            return None
        try:
            server = GameServer.objects.get_from_key(key)
        except GameServer.DoesNotExist:
            raise exceptions.AuthenticationFailed("Unknown or revoked game-server key.") from None
        if server.has_expired:
            raise exceptions.AuthenticationFailed("This game-server key has expired.")
        return AnonymousUser(), server

    def authenticate_header(self, request: Request) -> str:
        return "Api-Key"


class IsGameServer(permissions.BasePermission):
    message = "A game-server key is required."

    def has_permission(self, request: Request, view: Any) -> bool:
        return isinstance(request.auth, GameServer)


def allowed_board_slugs(server: GameServer) -> frozenset[str] | None:
    """The boards a key may post to, or None for every board."""
    slugs = frozenset(server.boards.values_list("slug", flat=True))
    return slugs or None


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
