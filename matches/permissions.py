"""Who may write: game servers holding a key that has not been revoked."""

from rest_framework_api_key.permissions import BaseHasAPIKey

from .models import GameServer


class HasGameServerKey(BaseHasAPIKey):
    """`Authorization: Api-Key <key>`; the key is checked against its hash on every request."""

    model = GameServer
