"""The webhooks' `archive.corrected` events of a correction, in pages, written in its
transaction."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from seasons.models import Season
from webhooks.models import EventType
from webhooks.services import webhook_events_emit

from .changes import ArchiveCorrection
from .work_tables import moves_read, reward_changes_read

# Changes told per event: a correction near the top of a board of millions moves everyone
# below, so it is told in pages, as a close's rewards are.
CHANGES_PER_EVENT = 500
# Rows read from the work tables at once while the events are written.
_READ_CHUNK = 2000


def corrected_announce(
    cursor: Any, season: Season, correction: ArchiveCorrection, now: datetime
) -> int:
    """The `archive.corrected` events: the summary on every page, then each change in exactly
    one page: the rewards revoked, granted and changed first (what a game backend acts on),
    then the clans, then the standings' moves. Returns how many events."""
    changes = (
        sum(correction.rewards.get(kind, 0) for kind in ("revoked", "granted", "changed"))
        + correction.clans
        + correction.moved
    )
    pages = max(1, -(-changes // CHANGES_PER_EVENT))

    def items() -> Iterator[tuple[str, dict[str, Any]]]:
        after = 0
        while rewards := reward_changes_read(cursor, after=after, limit=_READ_CHUNK):
            for _, change in rewards:
                yield change.kind, change.as_data()
            after = rewards[-1][0]
        for clan in correction.clan_changes:
            yield "clans", clan.as_data()
        after = 0
        while moves := moves_read(cursor, after=after, limit=_READ_CHUNK):
            for _, move in moves:
                yield "moves", move.as_data()
            after = moves[-1][0]

    def page_data() -> Iterator[dict[str, Any]]:
        number = 0
        page, filled = _empty_page(), 0
        for kind, item in items():
            (page["rewards"][kind] if kind in page["rewards"] else page[kind]).append(item)
            filled += 1
            if filled == CHANGES_PER_EVENT:
                number += 1
                yield _page(season, correction, now, (number, pages), page)
                page, filled = _empty_page(), 0
        if filled or number == 0:
            yield _page(season, correction, now, (number + 1, pages), page)

    return webhook_events_emit(
        event_type=EventType.ARCHIVE_CORRECTED, data_pages=page_data(), board=season.board
    )


def _empty_page() -> dict[str, Any]:
    return {"rewards": {"revoked": [], "granted": [], "changed": []}, "clans": [], "moves": []}


def _page(
    season: Season,
    correction: ArchiveCorrection,
    now: datetime,
    numbered: tuple[int, int],
    changes: dict[str, Any],
) -> dict[str, Any]:
    return {
        "board": season.board.slug,
        "season": season.slug,
        "season_id": season.pk,
        "corrected_at": now.isoformat(),
        "page": numbered[0],
        "pages": numbered[1],
        "summary": correction.summary,
        **changes,
    }
