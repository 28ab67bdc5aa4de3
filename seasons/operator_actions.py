"""The operator's actions on boards and seasons from the console, each audited in the same
transaction: closing a season now, saving a board (its rules' changes recorded), publishing or
hiding a board."""

from __future__ import annotations

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction

from audit.models import OperatorActionKind
from audit.services import operator_action_record

from .jobs import season_close_queue
from .models import Board, Season, SeasonState

# A board's fields that decide who ranks where; a change of any is recorded with old and new.
RULE_FIELDS = ("score_operator", "sort_order", "max_points_per_result")


def season_close_now(*, season: Season, actor: AbstractBaseUser | None) -> bool:
    """Queue the close of a season that is not closed yet, to end now (see leaderboards/closing.py's
    reset now); returns whether it was queued."""
    if season.state == SeasonState.CLOSED:
        return False
    with transaction.atomic():
        operator_action_record(
            actor=actor,
            action=OperatorActionKind.CLOSE_NOW,
            board=season.board.slug,
            season=season.slug,
            details={"ends_at_before": season.ends_at.isoformat()},
        )
        transaction.on_commit(lambda: season_close_queue(season.pk, force=True))
    return True


def board_save(*, board: Board, actor: AbstractBaseUser | None) -> Board:
    """Save a board checked by its form (Board.clean); a change of its rules is recorded."""
    with transaction.atomic():
        before = (
            Board.objects.select_for_update().filter(pk=board.pk).values(*RULE_FIELDS).first()
            if board.pk is not None
            else None
        )
        board.save()
        changed = {
            field: {"from": before[field], "to": getattr(board, field)}
            for field in RULE_FIELDS
            if before is not None and before[field] != getattr(board, field)
        }
        if changed:
            operator_action_record(
                actor=actor,
                action=OperatorActionKind.BOARD_RULES,
                board=board.slug,
                details=changed,
            )
    return board


def board_publish(*, board: Board, hidden: bool, actor: AbstractBaseUser | None) -> bool:
    """Publish a hidden board (`hidden` False) or hide a published one; returns whether it
    changed. Readers' processes keep a season they looked up for LEADERBOARD_SEASON_CACHE_SECONDS,
    so a board hidden again leaves the public reads within that time."""
    with transaction.atomic():
        locked = Board.objects.select_for_update().get(pk=board.pk)
        if locked.hidden == hidden:
            return False
        Board.objects.filter(pk=board.pk).update(hidden=hidden)
        operator_action_record(
            actor=actor,
            action=OperatorActionKind.BOARD_PUBLISH,
            board=locked.slug,
            details={"hidden": {"from": locked.hidden, "to": hidden}},
        )
    board.hidden = hidden
    return True
