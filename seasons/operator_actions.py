"""The operator's actions on boards and seasons from the console and the command line, each
audited in the same transaction: closing a season now, saving a board (its rules' and shards'
changes recorded), saving a season (its shards), changing a board's reward tiers, publishing or
hiding a board."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from audit.models import OperatorActionKind
from audit.services import operator_action_record
from config.building_blocks.errors import Conflict

from .jobs import season_close_queue
from .models import Board, RewardTier, Season, SeasonState
from .visibility import board_hidden_committed

# A board's fields that decide who ranks where; a change of any is recorded with old and new.
RULE_FIELDS = ("score_operator", "sort_order", "max_points_per_result")


def _refuse_unstarted(season: Season, now: datetime) -> None:
    """Closing now ends the season now: one that has not started would end before it starts."""
    if season.starts_at > now:
        raise Conflict(
            f"Season '{season.slug}' has not started (it starts at "
            f"{season.starts_at:%Y-%m-%d %H:%M} UTC): there is nothing to close. Delete it or "
            "move its window instead.",
            code="season_not_started",
        )


def season_close_now(*, season: Season, actor: AbstractBaseUser | None) -> bool:
    """Queue the close of a season that is not closed yet, to end now (see leaderboards/closing.py's
    reset now); returns whether it was queued. Raises Conflict, writing nothing, for a season
    that has not started."""
    if season.state == SeasonState.CLOSED:
        return False
    _refuse_unstarted(season, timezone.now())
    with transaction.atomic():
        # Sent on commit; asked twice before it ran (a double click), queued and audited once.
        if not season_close_queue(season.pk, force=True):
            return False
        operator_action_record(
            actor=actor,
            action=OperatorActionKind.CLOSE_NOW,
            board=season.board.slug,
            season=season.slug,
            details={"ends_at_before": season.ends_at.isoformat()},
        )
    return True


def season_close_forced_record(*, season: Season, actor: AbstractBaseUser | None) -> bool:
    """Record the close `manage.py close_season --force` is about to run, as a close now: only
    when the force decides it (an open season still taking results); a close that was due or is
    being resumed is not the operator's doing. Raises Conflict, writing nothing, for a season
    that has not started. Returns whether it recorded."""
    now = timezone.now()
    with transaction.atomic():
        locked = Season.objects.select_for_update().select_related("board").get(pk=season.pk)
        if locked.state != SeasonState.OPEN or now >= locked.accepts_until:
            return False
        _refuse_unstarted(locked, now)
        operator_action_record(
            actor=actor,
            action=OperatorActionKind.CLOSE_NOW,
            board=locked.board.slug,
            season=locked.slug,
            details={
                "ends_at_before": locked.ends_at.isoformat(),
                "command": "close_season --force",
            },
        )
    return True


def board_save(*, board: Board, actor: AbstractBaseUser | None) -> Board:
    """Save a board checked by its form (Board.clean); a change of its rules is recorded, and
    one of its shards (the next seasons' keys in Redis) on its own row."""
    with transaction.atomic():
        before = (
            Board.objects.select_for_update()
            .filter(pk=board.pk)
            .values(*RULE_FIELDS, "shards")
            .first()
            if board.pk is not None
            else None
        )
        board.save()
        if before is None:
            return board
        changed = {
            field: {"from": before[field], "to": getattr(board, field)}
            for field in RULE_FIELDS
            if before[field] != getattr(board, field)
        }
        if changed:
            operator_action_record(
                actor=actor,
                action=OperatorActionKind.BOARD_RULES,
                board=board.slug,
                details=changed,
            )
        if before["shards"] != board.shards:
            operator_action_record(
                actor=actor,
                action=OperatorActionKind.SHARDS,
                board=board.slug,
                details={"shards": {"from": before["shards"], "to": board.shards}},
            )
    return board


def season_save(*, season: Season, actor: AbstractBaseUser | None) -> Season:
    """Save a season checked by its form (Season.clean); a change of its shards is recorded."""
    with transaction.atomic():
        before = (
            Season.objects.select_for_update().filter(pk=season.pk).values("shards").first()
            if season.pk is not None
            else None
        )
        season.save()
        if before is not None and before["shards"] != season.shards:
            operator_action_record(
                actor=actor,
                action=OperatorActionKind.SHARDS,
                board=season.board.slug,
                season=season.slug,
                details={"shards": {"from": before["shards"], "to": season.shards}},
            )
    return season


def _tiers(board: Board) -> list[str]:
    return [str(tier) for tier in RewardTier.objects.filter(board=board).order_by("pk")]


@contextmanager
def reward_tiers_change(*, board: Board, actor: AbstractBaseUser | None) -> Iterator[None]:
    """Run the block that adds, changes or deletes the board's reward tiers (the board's page
    saves them together) and record what it changed, tiers before and after, in one row."""
    with transaction.atomic():
        # Two saves of one board's tiers at once would each record the other's change.
        Board.objects.select_for_update().only("pk").get(pk=board.pk)
        before = _tiers(board)
        yield
        after = _tiers(board)
        if after != before:
            operator_action_record(
                actor=actor,
                action=OperatorActionKind.REWARD_TIERS,
                board=board.slug,
                details={"from": before, "to": after},
            )


def board_publish(*, board: Board, hidden: bool, actor: AbstractBaseUser | None) -> bool:
    """Publish a hidden board (`hidden` False) or hide a published one; returns whether it
    changed. Readers' processes keep a season they looked up for LEADERBOARD_SEASON_CACHE_SECONDS,
    so a board hidden again leaves the public reads within that time; its open live sockets are
    closed once the hide commits (seasons/visibility.py)."""
    with transaction.atomic():
        locked = Board.objects.select_for_update().get(pk=board.pk)
        if locked.hidden == hidden:
            return False
        Board.objects.filter(pk=board.pk).update(hidden=hidden)
        if hidden:
            # Sockets follow seasons that are not closed (a closed one's socket closes at once).
            season_ids = list(
                Season.objects.filter(board=locked)
                .exclude(state=SeasonState.CLOSED)
                .values_list("pk", flat=True)
            )
            transaction.on_commit(lambda: board_hidden_committed(season_ids))
        operator_action_record(
            actor=actor,
            action=OperatorActionKind.BOARD_PUBLISH,
            board=locked.slug,
            details={"hidden": {"from": locked.hidden, "to": hidden}},
        )
    board.hidden = hidden
    return True
