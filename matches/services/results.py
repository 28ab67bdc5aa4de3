"""The write path: record match results and player totals in PostgreSQL, then queue the mirror.

A result is confirmed only once its transaction has committed; the Redis mirror runs after the
commit (transaction.on_commit), so a crash between the two only delays the leaderboard, and the
sweep in leaderboards/services.py catches up whatever was committed but not mirrored.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from config.building_blocks.errors import Conflict, InvalidInput
from seasons.scoring import MAX_POINTS

from .. import metrics, outbox
from .posted import (
    Item,
    PlayerSeason,
    PostedResult,
    ResultKey,
    ResultOutcome,
    SeasonRef,
    item_details,
    item_prefix,
)
from .resolving import resolve
from .statements import (
    contributions_by_rule,
    results_insert,
    rule_of,
    stored_results,
    totals_read,
    totals_upsert,
)


def results_record(
    *,
    results: Sequence[PostedResult],
    batch: bool = False,
    allowed_boards: frozenset[str] | None = None,
) -> list[ResultOutcome]:
    """Record match results (a batch commits all or nothing) and return one outcome each.

    `allowed_boards` limits the boards the posting game server may write to (None: all).
    """
    now = timezone.now()
    skew = timedelta(seconds=settings.RESULT_CLOCK_SKEW_SECONDS)
    for index, result in enumerate(results):
        if result.ended_at is not None and result.ended_at > now + skew:
            raise InvalidInput(
                f"{item_prefix(index, batch)}The result's ended_at may not be in the future.",
                details={
                    **(item_details(index, batch) or {}),
                    "fields": {"ended_at": ["In the future."]},
                },
            )
    try:
        with transaction.atomic():
            outcomes, changes = _record(results, now, batch, allowed_boards)
            if changes:
                transaction.on_commit(lambda: outbox.standings_committed(changes))
            accepted = sum(1 for outcome in outcomes if outcome.status == "accepted")
            transaction.on_commit(lambda: metrics.RESULTS_ACCEPTED.inc(accepted))
    except IntegrityError as exc:
        if "total_points_in_range" in str(exc):
            raise Conflict(
                f"A player's season total may not pass {MAX_POINTS}.",
                code="total_limit_exceeded",
            ) from exc
        raise
    return outcomes


def _record(
    results: Sequence[PostedResult],
    now: datetime,
    batch: bool,
    allowed_boards: frozenset[str] | None,
) -> tuple[list[ResultOutcome], list[outbox.StandingChange]]:
    """The write path's steps, a statement each: insert the results, look up the ones already
    stored, merge the new ones into the totals (one statement per scoring rule in the request),
    and read the totals that no merge returned (players whose results were all duplicates)."""
    items = resolve(results, now, batch, allowed_boards)
    first_of = _first_of_each_result(items, batch)
    # Sorted keys everywhere: concurrent requests lock rows in one order, so never deadlock.
    to_insert = sorted((key, item) for key, item in first_of.items() if item.season is not None)

    with connection.cursor() as cursor:
        inserted = results_insert(cursor, to_insert, now)
        stored = stored_results(
            cursor, [key for key in sorted(first_of) if key not in inserted], first_of, batch
        )
        totals: dict[PlayerSeason, int] = {}
        changes: list[outbox.StandingChange] = []
        for rule, contributions in contributions_by_rule(to_insert, inserted, batch).items():
            changes.extend(totals_upsert(cursor, rule, contributions, now, totals))

        # Where each item stands: its own season, or for a duplicate the stored result's.
        season_of = {item.index: _season_of(first_of[item.key], inserted, stored) for item in items}
        totals_read(
            cursor,
            {PlayerSeason(season_of[i.index].id, i.result.player_id) for i in items},
            totals,
        )

    accepted = {item.index for key, item in first_of.items() if key in inserted}
    return _outcomes(items, accepted, totals, season_of), changes


def _first_of_each_result(items: list[Item], batch: bool) -> dict[ResultKey, Item]:
    """The same (board, match, player) twice in one request: the first one counts, and a later
    one with other points is a conflict."""
    first_of: dict[ResultKey, Item] = {}
    for item in items:
        if item.key not in first_of:
            first_of[item.key] = item
        elif first_of[item.key].result.points != item.result.points:
            raise Conflict(
                f"{item_prefix(item.index, batch)}Match '{item.result.match_id}' already has a "
                f"different result for player '{item.result.player_id}' in this request.",
                code="conflict",
                details=item_details(item.index, batch),
            )
    return first_of


def _season_of(
    first: Item,
    inserted: dict[ResultKey, bool],
    stored: dict[ResultKey, SeasonRef],
) -> SeasonRef:
    if first.key in inserted and first.season is not None:
        return SeasonRef(first.season.id, first.season.slug)
    return stored[first.key]


def _outcomes(
    items: list[Item],
    accepted: set[int],
    totals: dict[PlayerSeason, int],
    season_of: dict[int, SeasonRef],
) -> list[ResultOutcome]:
    """One outcome per item, in request order. On sum boards an accepted result reports the
    player's running total right after it; otherwise the total once the request committed."""
    later_points: dict[PlayerSeason, int] = defaultdict(int)
    total_after: dict[int, int] = {}
    for item in reversed(items):
        player_key = PlayerSeason(season_of[item.index].id, item.result.player_id)
        total = totals.get(player_key, 0)
        if item.index in accepted and rule_of(item.board) == "sum":
            total_after[item.index] = total - later_points[player_key]
            later_points[player_key] += item.result.points
        else:
            total_after[item.index] = total
    return [
        ResultOutcome(
            status="accepted" if item.index in accepted else "duplicate",
            match_id=item.result.match_id,
            player_id=item.result.player_id,
            board=item.board.slug,
            season=season_of[item.index].slug,
            points=item.result.points,
            total_points=total_after[item.index],
            ended_at=item.ended_at,
        )
        for item in items
    ]
