"""The corrections: an operator's preview and correction of a closed season's archive, and the
automatic one after a ban on the boards that ask for it."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone

from audit.models import OperatorActionKind
from audit.services import operator_action_record
from config.building_blocks.errors import Conflict
from seasons.models import Season, SeasonState

from .. import store
from .announce import corrected_announce
from .changes import ArchiveCorrection
from .work_tables import APPLY, correction_read, differences_build, work_tables_drop

logger = logging.getLogger(__name__)

# Rows of each kind a correction lists (the preview pages its moves), as the audit record does.
LISTED = 500


def _closed(season: Season) -> None:
    if season.state != SeasonState.CLOSED:
        raise Conflict(
            f"Season '{season.slug}' is not closed; only a closed season's archive is corrected.",
            code="season_not_closed",
        )


def season_archive_correction_preview(
    *, season: Season, offset: int = 0, limit: int = 100, now: datetime | None = None
) -> ArchiveCorrection:
    """What correcting the closed season's archive now would change (a page of its moves, from
    `offset`); nothing is written."""
    now = now or timezone.now()
    season = Season.objects.select_related("board").get(pk=season.pk)
    _closed(season)
    with transaction.atomic(), connection.cursor() as cursor:
        players = differences_build(cursor, season, now)
        correction = correction_read(
            cursor, season, players, offset=offset, limit=limit, listed=LISTED
        )
        work_tables_drop(cursor)
    return correction


def season_archive_correct(
    *,
    season: Season,
    actor: AbstractBaseUser | None,
    reason: str = "",
    now: datetime | None = None,
) -> ArchiveCorrection:
    """Correct the closed season's archive: standings re-ranked, segments and clans too, rewards
    revoked, granted or changed by the close's rule, the changed standings marked; audited as
    `actor`'s (None: a command line's or the automatic correction's) and told to the webhooks
    (`archive.corrected`, in pages), all in one transaction. A correction that finds nothing to
    change writes nothing. The season's sorted set, if its board still keeps it, is removed once
    committed: from then on its reads are the archive's."""
    now = now or timezone.now()
    with transaction.atomic(), connection.cursor() as cursor:
        season = Season.objects.select_for_update().select_related("board").get(pk=season.pk)
        _closed(season)
        players = differences_build(cursor, season, now)
        correction = correction_read(cursor, season, players, offset=0, limit=LISTED, listed=LISTED)
        if correction.changes_nothing:
            work_tables_drop(cursor)
            return correction
        for statement in APPLY:
            cursor.execute(statement, {"season": season.pk, "now": now})
        keys_kept = season.standings_removed_at is None
        Season.objects.filter(pk=season.pk).update(
            archived_players=players, standings_removed_at=season.standings_removed_at or now
        )
        operator_action_record(
            actor=actor,
            action=OperatorActionKind.CORRECT_ARCHIVE,
            reason=reason,
            board=season.board.slug,
            season=season.slug,
            details={
                **correction.summary,
                "moves_listed": [move.as_data() for move in correction.moves],
                "rewards_listed": [
                    {"kind": change.kind, **change.as_data()}
                    for change in correction.reward_changes
                ],
                "clans_listed": [change.as_data() for change in correction.clan_changes],
            },
        )
        corrected_announce(cursor, season, correction, now)
        work_tables_drop(cursor)
        if keys_kept:
            season_id, shards = season.pk, season.shards
            transaction.on_commit(lambda: store.delete_standings(season_id, shards=shards))
    logger.info("season %s: archive corrected, %s", season.pk, correction.summary)
    return replace(correction, applied_at=now)


def seasons_corrected_on_ban(*, player_id: str) -> QuerySet[Season]:
    """The closed seasons a ban of the player corrects: of boards that ask for it
    (Board.correct_archive_on_ban), with the player archived."""
    return (
        Season.objects.filter(
            state=SeasonState.CLOSED,
            board__correct_archive_on_ban=True,
            archived_standings__player_id=player_id,
        )
        .order_by("ends_at")
        .distinct()
    )


def archives_correct_after_ban(*, player_id: str, now: datetime | None = None) -> list[int]:
    """The automatic correction after a ban: each of seasons_corrected_on_ban corrected; returns
    the seasons that changed. Idempotent: a season corrected already changes nothing."""
    return [
        season.pk
        for season in seasons_corrected_on_ban(player_id=player_id)
        if not season_archive_correct(
            season=season, actor=None, reason=f"automatic, after the ban of {player_id}", now=now
        ).changes_nothing
    ]
