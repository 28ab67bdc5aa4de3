"""Game-server keys as operators manage them (the admin, `manage.py create_game_server`):
creating one, changing its boards, revoking or deleting it, each recorded in the audit log in
the change's own transaction. The key itself is never recorded; its prefix names it."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction

from audit.models import OperatorActionKind
from audit.services import operator_action_record

from .models import GameServer

# The fields of a key that decide what it may do; a change of any is recorded with old and new.
KEY_FIELDS = ("name", "revoked", "expiry_date", "boards")


def _shown(field: str, value: Any) -> Any:
    if field == "boards":
        return sorted(board.slug for board in value)
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def _now(server: GameServer) -> dict[str, Any]:
    return {
        "revoked": server.revoked,
        "expiry_date": _shown("expiry_date", server.expiry_date),
        "boards": sorted(server.boards.values_list("slug", flat=True)),
        "name": server.name,
    }


def _record(*, server: GameServer, actor: AbstractBaseUser | None, details: dict) -> None:
    operator_action_record(
        actor=actor,
        action=OperatorActionKind.GAME_SERVER_KEY,
        details={"key": server.name, "prefix": server.prefix, **details},
    )


def game_server_create(*, name: str, actor: AbstractBaseUser | None) -> tuple[GameServer, str]:
    """A new key for every board; returns the key's row and the key, which is shown once."""
    with transaction.atomic():
        server, key = GameServer.objects.create_key(name=name)
        game_server_saved(server=server, before=None, actor=actor)
    return server, key


def game_server_saved(
    *,
    server: GameServer,
    before: Mapping[str, Any] | None,
    actor: AbstractBaseUser | None,
) -> bool:
    """Record a key just saved with its boards, inside the save's transaction: `before` holds
    its fields as they were (those of KEY_FIELDS it has; None: just created). Returns whether a
    row was written (a save that changed nothing writes none)."""
    after = _now(server)
    if before is None:
        _record(
            server=server,
            actor=actor,
            details={"change": "created", **{k: v for k, v in after.items() if k != "name"}},
        )
        return True
    changed = {
        field: {"from": _shown(field, before[field]), "to": after[field]}
        for field in KEY_FIELDS
        if field in before and _shown(field, before[field]) != after[field]
    }
    if not changed:
        return False
    revoked = changed.get("revoked", {}).get("to") is True
    _record(
        server=server,
        actor=actor,
        details={"change": "revoked" if revoked else "changed", **changed},
    )
    return True


def game_server_delete(*, server: GameServer, actor: AbstractBaseUser | None) -> None:
    with transaction.atomic():
        _record(server=server, actor=actor, details={"change": "deleted"})
        server.delete()
