"""Writing the audit log: called by each service that does an operator action, inside its
transaction, so the action and its record commit together or not at all."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser

from .models import OperatorAction, OperatorActionKind

# Who acted when no account did: a command line or a scheduled task.
SYSTEM_ACTOR = "system"


def operator_action_record(
    *,
    actor: AbstractBaseUser | None,
    action: OperatorActionKind,
    reason: str = "",
    board: str = "",
    season: str = "",
    player_id: str = "",
    details: dict[str, Any] | None = None,
) -> OperatorAction:
    return OperatorAction.objects.create(
        actor=actor,
        actor_name=actor.get_username() if actor is not None else SYSTEM_ACTOR,
        action=action,
        reason=reason,
        board=board,
        season=season,
        player_id=player_id,
        details=details or {},
    )
