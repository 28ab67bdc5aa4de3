"""Bans and unbans: a banned player's results are stored but not counted, and their live boards
are refreshed through the bans' outbox (PendingPlayerRefresh) once the change commits; the
periodic task lifts temporary bans that have ended. Audited as the operator's, and told to the
webhooks (`player.banned`, `player.unbanned`) in the same transaction."""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import connection, transaction
from django.utils import timezone

from audit.models import OperatorActionKind
from audit.services import operator_action_record
from config.building_blocks.errors import InvalidInput
from webhooks.models import EventType
from webhooks.services import webhook_event_emit

from .. import outbox
from ..models import Player
from .refreshes import player_refresh_owe

# The advisory lock that orders bans against results being written (any fixed 64-bit number).
BANS_LOCK = 7_466_921_042


def player_ban(
    *,
    player_id: str,
    reason: str,
    until: datetime | None = None,
    actor: AbstractBaseUser | None = None,
) -> Player:
    """Ban a cheater, until lifted or until `until`: off every live board now, out of archives
    made meanwhile; results they post are stored but not counted. Waits for results of theirs
    already in flight. Banning a banned player again sets the new reason and end. Audited as
    `actor`'s (None: a command line's)."""
    now = timezone.now()
    if until is not None and until <= now:
        raise InvalidInput("A temporary ban must end in the future.", code="ban_already_over")
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [BANS_LOCK])
        player = Player.objects.select_for_update().get(player_id=player_id)
        before = player.banned_until.isoformat() if player.banned_until else "until lifted"
        if not player.banned_at_time(now):
            player.banned_at = now
            before = "not banned"
        elif player.ban_reason == reason and player.banned_until == until:
            # Nothing to change or audit, but the boards are refreshed again: an operator who
            # still sees the player on a board can repeat the ban to put that right.
            player_refresh_owe(player_id)
            return player
        player.banned_until = until
        player.ban_reason = reason
        player.save(update_fields=["banned_at", "banned_until", "ban_reason", "updated_at"])
        operator_action_record(
            actor=actor,
            action=OperatorActionKind.BAN,
            player_id=player_id,
            reason=reason,
            details={"until": until.isoformat() if until else None, "before": before},
        )
        webhook_event_emit(
            event_type=EventType.PLAYER_BANNED,
            data={
                "player_id": player_id,
                "reason": reason,
                "banned_at": player.banned_at.isoformat(),
                "until": until.isoformat() if until else None,
            },
        )
        player_refresh_owe(player_id)
        # The closed seasons' archives of the boards that correct them on a ban follow it.
        transaction.on_commit(lambda: outbox.player_banned_committed(player_id))
    return player


def player_unban(
    *,
    player_id: str,
    actor: AbstractBaseUser | None = None,
    reason: str = "",
    ended_by: datetime | None = None,
) -> Player:
    """Lift a ban: the player's standing returns exactly as PostgreSQL has it (results posted
    during the ban stay uncounted). With `ended_by`, only a temporary ban that ended by then
    (a ban extended meanwhile stays). Audited as `actor`'s."""
    with transaction.atomic():
        player = Player.objects.select_for_update().get(player_id=player_id)
        if ended_by is not None and (player.banned_until is None or player.banned_until > ended_by):
            return player
        if player.banned_at is not None:
            operator_action_record(
                actor=actor,
                action=OperatorActionKind.UNBAN,
                player_id=player_id,
                reason=reason,
                details={"ban_reason": player.ban_reason},
            )
            webhook_event_emit(
                event_type=EventType.PLAYER_UNBANNED,
                data={
                    "player_id": player_id,
                    "reason": reason,
                    "ban_reason": player.ban_reason,
                    "unbanned_at": timezone.now().isoformat(),
                },
            )
            player.banned_at = None
            player.banned_until = None
            player.ban_reason = ""
            player.save(update_fields=["banned_at", "banned_until", "ban_reason", "updated_at"])
        # Also when the player was not banned: repeating an unban refreshes the boards again.
        player_refresh_owe(player_id)
    return player


def players_unban_expired(*, now: datetime | None = None) -> list[str]:
    """Lift the temporary bans that ended by `now` (the periodic task, every minute); returns
    the players unbanned. The write path already counts their results from the ban's end."""
    now = now or timezone.now()
    # The partial index of banned players finds them; the few rows are read for their end.
    ended = list(
        Player.objects.filter(banned_at__isnull=False, banned_until__lte=now)
        .order_by("player_id")
        .values_list("player_id", flat=True)
    )
    for player_id in ended:
        player_unban(player_id=player_id, reason="temporary ban ended", ended_by=now)
    return ended
