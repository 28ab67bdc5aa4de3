"""Correcting the record: an operator voids a single result (with a reason). The result is kept,
marked voided and uncounted, and the player's total is computed again from the results that
still count, by the board's rule; the ranking store then sets the player's entry exactly (a void
moves it the way the mirror never does). Audited, and told to the webhooks (`result.voided`), in
the same transaction.

The write path is not changed: a result posted again finds the voided row by its unique key and
is answered as a duplicate, so it stays voided.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import connection, transaction
from django.db.models import Max, Min, Sum
from django.utils import timezone

from audit.models import OperatorActionKind
from audit.services import operator_action_record
from config.building_blocks.errors import Conflict
from seasons.models import ScoreOperator, Season, SeasonState
from webhooks.models import EventType
from webhooks.services import webhook_event_emit

from . import archive_notes, outbox
from .models import MatchResult, PlayerTotal


@dataclass(frozen=True, slots=True)
class Recomputed:
    points: int
    reached_at: datetime


def _total_from_counted(season: Season, player_id: str) -> Recomputed | None:
    """The player's total from the results that still count, by the board's rule (the same
    rule the write path merges with: a sum reached at its latest result; a best reached at the
    earliest result with the best points)."""
    counted = MatchResult.objects.filter(season=season, player_id=player_id, counted=True)
    board = season.board
    if board.score_operator == ScoreOperator.SUM:
        found = counted.aggregate(points=Sum("points"), reached_at=Max("ended_at"))
        if found["points"] is None:
            return None
        return Recomputed(found["points"], found["reached_at"])
    best = counted.aggregate(best=Min("points") if board.lowest_first else Max("points"))["best"]
    if best is None:
        return None
    reached_at = counted.filter(points=best).aggregate(at=Min("ended_at"))["at"]
    return Recomputed(best, reached_at)


def result_void(*, result_id: int, reason: str, actor: AbstractBaseUser | None) -> bool:
    """Void one result: kept, uncounted, the total recomputed; returns False if it was voided
    already (nothing changes). A closing season refuses (`season_closing`): void it once closed.
    In a closed season the archive's row keeps its rank, points and reward, with a note."""
    reason = reason.strip()
    if not reason:
        raise ValueError("A void needs a reason.")
    now = timezone.now()
    with transaction.atomic():
        result = MatchResult.objects.select_for_update().get(pk=result_id)
        if result.voided_at is not None:
            return False
        # A share lock, as the write path takes: results keep flowing, the close waits.
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT 1 FROM seasons_season WHERE id = %s FOR SHARE", [result.season_id]
            )
        season = Season.objects.select_related("board").get(pk=result.season_id)
        if season.state == SeasonState.CLOSING:
            raise Conflict(
                f"Season '{season.slug}' is being closed; void the result once it is closed.",
                code="season_closing",
            )
        player_id = result.player_id
        # Locked before the results are read: a result committed meanwhile is either seen by
        # the read below or merged into the recomputed total by its own upsert afterwards.
        total = (
            PlayerTotal.objects.select_for_update()
            .filter(season=season, player_id=player_id)
            .first()
        )
        was_counted = result.counted
        MatchResult.objects.filter(pk=result.pk).update(
            counted=False, voided_at=now, void_reason=reason
        )
        recomputed = _total_from_counted(season, player_id)
        before = None if total is None else total.points
        if total is not None and recomputed is None:
            total.delete()
        elif total is not None and recomputed is not None:
            PlayerTotal.objects.filter(pk=total.pk).update(
                points=recomputed.points, reached_at=recomputed.reached_at, updated_at=now
            )
        after = None if recomputed is None else recomputed.points
        if season.state == SeasonState.CLOSED:
            archive_notes.archived_standing_note(
                season_id=season.pk,
                player_id=player_id,
                note=(
                    f"{now:%Y-%m-%d %H:%M} UTC: result {result.match_id} ({result.points} "
                    f"points) voided after the close: {reason}. Total now "
                    f"{after if after is not None else 'none'}; rank and reward kept as archived."
                ),
            )
        operator_action_record(
            actor=actor,
            action=OperatorActionKind.VOID_RESULT,
            reason=reason,
            board=season.board.slug,
            season=season.slug,
            player_id=player_id,
            details={
                "result_id": result.pk,
                "match_id": result.match_id,
                "points": result.points,
                "was_counted": was_counted,
                "total_before": before,
                "total_after": after,
            },
        )
        webhook_event_emit(
            event_type=EventType.RESULT_VOIDED,
            data={
                "result_id": result.pk,
                "match_id": result.match_id,
                "player_id": player_id,
                "board": season.board.slug,
                "season": season.slug,
                "season_id": season.pk,
                "points": result.points,
                "was_counted": was_counted,
                "total_before": before,
                "total_after": after,
                "season_closed": season.state == SeasonState.CLOSED,
                "reason": reason,
                "voided_at": now.isoformat(),
            },
            board=season.board,
        )
        if season.state != SeasonState.CLOSED and was_counted:
            season_id = season.pk
            transaction.on_commit(lambda: outbox.standing_corrected_committed(season_id, player_id))
    return True
