"""Which board and season each posted result goes to, checked against the posting key's boards,
the boards' limits and the seasons' windows, with the season rows share-locked for the write."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime

from django.conf import settings
from django.db import connection

from config.building_blocks.caching import RecentAnswers
from config.building_blocks.errors import Conflict, Forbidden, InvalidInput, NotFound
from seasons.models import DEFAULT_BOARD, Board, Season, SeasonState

from .bans import BANS_LOCK
from .posted import Item, PostedResult, item_details, item_prefix

# Boards by slug (None: no such board), reused for LEADERBOARD_SEASON_CACHE_SECONDS: a board's
# rules and limits change rarely, and every request needs them.
board_lookups_cache: RecentAnswers[Board | None] = RecentAnswers(
    seconds=lambda: settings.LEADERBOARD_SEASON_CACHE_SECONDS, maxsize=lambda: 1024
)


def _boards(slugs: set[str]) -> dict[str, Board]:
    boards = {
        slug: board_lookups_cache.get_or_build(
            slug, lambda slug=slug: Board.objects.filter(slug=slug).first()
        )
        for slug in slugs
    }
    return {slug: board for slug, board in boards.items() if board is not None}


# The season rows built straight from the cursor's rows: a RawQuerySet maps its columns to
# fields anew on every call, which was 6% of a web process's time at 6,000 results a second.
_SEASON_FIELDS = [field.attname for field in Season._meta.concrete_fields]
_SEASONS_LOCKED_SQL = f"""
    SELECT {", ".join(field.column for field in Season._meta.concrete_fields)},
        pg_advisory_xact_lock_shared(%s)
    FROM {Season._meta.db_table}
    WHERE board_id = ANY(%s) AND (slug = ANY(%s) OR (starts_at <= %s AND ends_at > %s))
    ORDER BY id
    FOR SHARE
"""


def _seasons_locked(
    board_ids: list[int], slugs: list[str], latest_end: datetime, earliest_end: datetime
) -> list[Season]:
    """The boards' seasons named or running when the results ended, share-locked, with the
    writers' share of the bans lock taken in the same round trip."""
    with connection.cursor() as cursor:
        cursor.execute(_SEASONS_LOCKED_SQL, [BANS_LOCK, board_ids, slugs, latest_end, earliest_end])
        rows = cursor.fetchall()
    return [Season.from_db(connection.alias, _SEASON_FIELDS, row[:-1]) for row in rows]


def resolve(
    results: Sequence[PostedResult],
    now: datetime,
    batch: bool,
    allowed_boards: frozenset[str] | None,
) -> list[Item]:
    """Find each result's board and season, holding a share lock on the seasons so the close job
    cannot mark one closing while this transaction writes into it, and the writers' share of the
    bans lock (see player_ban), in one round trip."""
    boards = _boards({r.board or DEFAULT_BOARD for r in results})
    for index, result in enumerate(results):
        slug = result.board or DEFAULT_BOARD
        if slug not in boards:
            raise NotFound(
                f"{item_prefix(index, batch)}Unknown board '{slug}'.",
                code="board_not_found",
                details=item_details(index, batch),
            )
        if allowed_boards is not None and slug not in allowed_boards:
            raise Forbidden(
                f"{item_prefix(index, batch)}This game-server key may not post to board '{slug}'.",
                code="board_not_allowed",
                details=item_details(index, batch),
            )
        limit = boards[slug].max_points_per_result
        if limit is not None and result.points > limit:
            raise InvalidInput(
                f"{item_prefix(index, batch)}{result.points} points is more than board '{slug}' "
                f"allows for one result ({limit}).",
                code="points_over_limit",
                details={**(item_details(index, batch) or {}), "max_points_per_result": limit},
            )
    ended = [r.ended_at or now for r in results]
    explicit = {r.season for r in results if r.season}
    seasons = _seasons_locked(
        [b.id for b in boards.values()], list(explicit), max(ended), min(ended)
    )
    by_board: dict[int, list[Season]] = defaultdict(list)
    board_of = {board.id: board for board in boards.values()}
    for season in seasons:
        # The season row came without its board; the cached one is the same row.
        season.board = board_of[season.board_id]
        by_board[season.board_id].append(season)

    items: list[Item] = []
    for index, (result, ended_at) in enumerate(zip(results, ended, strict=True)):
        board = boards[result.board or DEFAULT_BOARD]
        candidates = by_board[board.id]
        season: Season | None
        refusal: Conflict | None = None
        if result.season:
            season = next((s for s in candidates if s.slug == result.season), None)
            if season is None:
                raise NotFound(
                    f"{item_prefix(index, batch)}Board '{board.slug}' has no season "
                    f"'{result.season}'.",
                    code="season_not_found",
                    details=item_details(index, batch),
                )
            if not season.holds(ended_at):
                refusal = Conflict(
                    f"{item_prefix(index, batch)}The result ended outside season "
                    f"'{season.slug}' ({season.starts_at.isoformat()} to "
                    f"{season.ends_at.isoformat()}).",
                    code="season_closed",
                    details=item_details(index, batch),
                )
        else:
            season = next((s for s in candidates if s.holds(ended_at)), None)
            if season is None:
                refusal = Conflict(
                    f"{item_prefix(index, batch)}Board '{board.slug}' has no season running at "
                    f"{ended_at.isoformat()}.",
                    code="no_active_season",
                    details=item_details(index, batch),
                )
        if (
            season is not None
            and refusal is None
            and (season.state != SeasonState.OPEN or now >= season.accepts_until)
        ):
            refusal = Conflict(
                f"{item_prefix(index, batch)}Season '{season.slug}' is closed to new results.",
                code="season_closed",
                details=item_details(index, batch),
            )
        items.append(Item(index, result, board, None if refusal else season, ended_at, refusal))
    return items
