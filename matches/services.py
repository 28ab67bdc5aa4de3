"""The write path: record match results and player totals in PostgreSQL, then queue the mirror.

A result is confirmed only once its transaction has committed; the Redis mirror runs after the
commit (transaction.on_commit), so a crash between the two only delays the leaderboard, and the
sweep in leaderboards/services.py catches up whatever was committed but not mirrored.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from config.errors import Conflict, Forbidden, InvalidInput, NotFound
from seasons.models import Board, ScoreOperator, Season, SeasonState

from .models import Player

DEFAULT_BOARD = "global"
# The advisory lock that orders bans against results being written (any fixed 64-bit number).
BANS_LOCK = 7_466_921_042


@dataclass(frozen=True, slots=True)
class ResultIn:
    player_id: str
    points: int
    match_id: str
    board: str | None = None
    season: str | None = None
    ended_at: datetime | None = None


@dataclass(slots=True)
class ResultOutcome:
    status: str  # "accepted" or "duplicate"
    match_id: str
    player_id: str
    board: str
    season: str
    points: int
    total_points: int
    ended_at: datetime


@dataclass(slots=True)
class _Item:
    index: int
    result: ResultIn
    board: Board
    season: Season
    ended_at: datetime


def _at(index: int, batch: bool) -> dict[str, int] | None:
    return {"index": index} if batch else None


def _where(index: int, batch: bool) -> str:
    return f"Item {index}: " if batch else ""


def _resolve(
    results: Sequence[ResultIn],
    now: datetime,
    batch: bool,
    allowed_boards: frozenset[str] | None,
) -> list[_Item]:
    """Find each result's board and season, holding a share lock on the seasons so the close job
    cannot mark one closing while this transaction writes into it."""
    board_slugs = {r.board or DEFAULT_BOARD for r in results}
    boards = {b.slug: b for b in Board.objects.filter(slug__in=board_slugs)}
    for index, result in enumerate(results):
        slug = result.board or DEFAULT_BOARD
        if slug not in boards:
            raise NotFound(
                f"{_where(index, batch)}unknown board '{slug}'.",
                code="board_not_found",
                details=_at(index, batch),
            )
        if allowed_boards is not None and slug not in allowed_boards:
            raise Forbidden(
                f"{_where(index, batch)}this game-server key may not post to board '{slug}'.",
                code="board_not_allowed",
                details=_at(index, batch),
            )
        limit = boards[slug].max_points_per_result
        if limit is not None and result.points > limit:
            raise InvalidInput(
                f"{_where(index, batch)}{result.points} points is more than board '{slug}' "
                f"allows for one result ({limit}).",
                code="points_over_limit",
                details={**(_at(index, batch) or {}), "max_points_per_result": limit},
            )
    ended = [r.ended_at or now for r in results]
    explicit = {r.season for r in results if r.season}
    seasons = list(
        Season.objects.raw(
            """
            SELECT * FROM seasons_season
            WHERE board_id = ANY(%s)
              AND (slug = ANY(%s) OR (starts_at <= %s AND ends_at > %s))
            ORDER BY id
            FOR SHARE
            """,
            [[b.id for b in boards.values()], list(explicit), max(ended), min(ended)],
        )
    )
    by_board: dict[int, list[Season]] = defaultdict(list)
    for season in seasons:
        by_board[season.board_id].append(season)

    items: list[_Item] = []
    for index, (result, ended_at) in enumerate(zip(results, ended, strict=True)):
        board = boards[result.board or DEFAULT_BOARD]
        candidates = by_board[board.id]
        if result.season:
            season = next((s for s in candidates if s.slug == result.season), None)
            if season is None:
                raise NotFound(
                    f"{_where(index, batch)}board '{board.slug}' has no season '{result.season}'.",
                    code="season_not_found",
                    details=_at(index, batch),
                )
            if not season.holds(ended_at):
                raise Conflict(
                    f"{_where(index, batch)}the result ended outside season "
                    f"'{season.slug}' ({season.starts_at.isoformat()} to "
                    f"{season.ends_at.isoformat()}).",
                    code="season_closed",
                    details=_at(index, batch),
                )
        else:
            season = next((s for s in candidates if s.holds(ended_at)), None)
            if season is None:
                raise Conflict(
                    f"{_where(index, batch)}board '{board.slug}' has no season running at "
                    f"{ended_at.isoformat()}.",
                    code="no_active_season",
                    details=_at(index, batch),
                )
        if season.state != SeasonState.OPEN or now >= season.accepts_until:
            raise Conflict(
                f"{_where(index, batch)}season '{season.slug}' is closed to new results.",
                code="season_closed",
                details=_at(index, batch),
            )
        items.append(_Item(index, result, board, season, ended_at))
    return items


# How a new result merges into a player's total, per board rule. In ON CONFLICT DO UPDATE
# every expression sees the row as it was, and "excluded" is this request's contribution.
_MERGE_SQL = {
    "sum": """
        points = t.points + excluded.points,
        reached_at = GREATEST(t.reached_at, excluded.reached_at)""",
    "best_highest": """
        points = GREATEST(t.points, excluded.points),
        reached_at = CASE WHEN excluded.points > t.points THEN excluded.reached_at
                          WHEN excluded.points = t.points
                               THEN LEAST(t.reached_at, excluded.reached_at)
                          ELSE t.reached_at END""",
    "best_lowest": """
        points = LEAST(t.points, excluded.points),
        reached_at = CASE WHEN excluded.points < t.points THEN excluded.reached_at
                          WHEN excluded.points = t.points
                               THEN LEAST(t.reached_at, excluded.reached_at)
                          ELSE t.reached_at END""",
}


def _rule(board: Board) -> str:
    if board.score_operator == ScoreOperator.SUM:
        return "sum"
    return "best_lowest" if board.lowest_first else "best_highest"


def _better(rule: str, a: int, b: int) -> int:
    if rule == "sum":
        return a + b
    return min(a, b) if rule == "best_lowest" else max(a, b)


def _contribution(rule: str, items: list[_Item]) -> tuple[int, datetime]:
    """What a request's new results for one player add to the total, and when it was reached."""
    if rule == "sum":
        return sum(i.result.points for i in items), max(i.ended_at for i in items)
    best = items[0].result.points
    for item in items[1:]:
        best = _better(rule, best, item.result.points)
    return best, min(i.ended_at for i in items if i.result.points == best)


def results_record(
    *,
    results: Sequence[ResultIn],
    batch: bool = False,
    allowed_boards: frozenset[str] | None = None,
) -> list[ResultOutcome]:
    """Record match results (a batch commits all or nothing) and return one outcome each.

    `allowed_boards` limits the boards the posting game server may write to (None: all).
    """
    from leaderboards.metrics import RESULTS_ACCEPTED
    from leaderboards.tasks import queue_mirror

    now = timezone.now()
    skew = timedelta(seconds=settings.RESULT_CLOCK_SKEW_SECONDS)
    for index, result in enumerate(results):
        if result.ended_at is not None and result.ended_at > now + skew:
            raise InvalidInput(
                f"{_where(index, batch)}ended_at may not be in the future.",
                details={**(_at(index, batch) or {}), "fields": {"ended_at": ["In the future."]}},
            )
    try:
        with transaction.atomic():
            outcomes, total_ids = _record(results, now, batch, allowed_boards)
            if total_ids:
                transaction.on_commit(lambda: queue_mirror(total_ids))
            accepted = sum(1 for outcome in outcomes if outcome.status == "accepted")
            transaction.on_commit(lambda: RESULTS_ACCEPTED.inc(accepted))
    except IntegrityError as exc:
        if "total_points_in_range" in str(exc):
            raise Conflict(
                f"A player's season total may not pass {2**29 - 1}.",
                code="total_limit_exceeded",
            ) from exc
        raise
    return outcomes


def _record(
    results: Sequence[ResultIn],
    now: datetime,
    batch: bool,
    allowed_boards: frozenset[str] | None,
) -> tuple[list[ResultOutcome], list[int]]:
    items = _resolve(results, now, batch, allowed_boards)

    # The same (season, match, player) twice in one request: the first one counts.
    first_of: dict[tuple[int, str, str], _Item] = {}
    repeats: list[_Item] = []
    for item in items:
        key = (item.season.id, item.result.match_id, item.result.player_id)
        if key in first_of:
            if first_of[key].result.points != item.result.points:
                raise Conflict(
                    f"{_where(item.index, batch)}match '{item.result.match_id}' already has a "
                    f"different result for player '{item.result.player_id}' in this request.",
                    code="conflict",
                    details=_at(item.index, batch),
                )
            repeats.append(item)
        else:
            first_of[key] = item
    unique = sorted(first_of.items())

    with connection.cursor() as cursor:
        # Sorted keys everywhere: concurrent batches lock rows in one order, so never deadlock.
        player_ids = sorted({k[2] for k, _ in unique})
        cursor.execute(
            "INSERT INTO matches_player (player_id, display_name, avatar_url, ban_reason,"
            " created_at, updated_at) SELECT p, '', '', '', %s, %s FROM unnest(%s::text[]) AS p"
            " ORDER BY p ON CONFLICT (player_id) DO NOTHING",
            [now, now, player_ids],
        )
        # Writers share one advisory lock that a ban takes exclusively: a ban waits for the
        # results in flight, and results posted after it see it. (Share-locking each player's
        # row did the same at the cost of a row lock, written to disk, per result.) Banned
        # players' results are stored but not counted.
        cursor.execute("SELECT pg_advisory_xact_lock_shared(%s)", [BANS_LOCK])
        cursor.execute(
            "SELECT player_id FROM matches_player"
            " WHERE player_id = ANY(%s) AND banned_at IS NOT NULL",
            [player_ids],
        )
        banned = {row[0] for row in cursor.fetchall()}
        cursor.execute(
            """
            INSERT INTO matches_matchresult
                (season_id, match_id, player_id, points, ended_at, received_at, counted)
            SELECT s, m, p, pts, e, %s, NOT (p = ANY(%s::text[]))
            FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::int[], %s::timestamptz[])
                AS r(s, m, p, pts, e)
            ORDER BY s, m, p
            ON CONFLICT (season_id, match_id, player_id) DO NOTHING
            RETURNING season_id, match_id, player_id
            """,
            [
                now,
                sorted(banned),
                [k[0] for k, _ in unique],
                [k[1] for k, _ in unique],
                [k[2] for k, _ in unique],
                [i.result.points for _, i in unique],
                [i.ended_at for _, i in unique],
            ],
        )
        inserted = {(row[0], row[1], row[2]) for row in cursor.fetchall()}
        already = [k for k, _ in unique if k not in inserted]
        if already:
            cursor.execute(
                """
                SELECT season_id, match_id, player_id, points FROM matches_matchresult
                WHERE (season_id, match_id, player_id) IN (
                    SELECT * FROM unnest(%s::bigint[], %s::text[], %s::text[]))
                """,
                [[k[0] for k in already], [k[1] for k in already], [k[2] for k in already]],
            )
            stored = {(r[0], r[1], r[2]): r[3] for r in cursor.fetchall()}
            for key in already:
                item = first_of[key]
                if stored.get(key) != item.result.points:
                    raise Conflict(
                        f"{_where(item.index, batch)}match '{item.result.match_id}' already has "
                        f"a different result ({stored.get(key)} points) for player "
                        f"'{item.result.player_id}'.",
                        code="conflict",
                        details=_at(item.index, batch),
                    )

        # Each player's contribution from the results this request really inserted.
        new_by_player: dict[tuple[int, str], list[_Item]] = defaultdict(list)
        for key, item in unique:
            if key in inserted and key[2] not in banned:
                new_by_player[(key[0], key[2])].append(item)
        totals: dict[tuple[int, str], int] = {}
        total_ids: list[int] = []
        by_rule: dict[str, list[tuple[tuple[int, str], int, datetime]]] = defaultdict(list)
        for (season_id, player_id), player_items in sorted(new_by_player.items()):
            rule = _rule(player_items[0].board)
            points, reached_at = _contribution(rule, player_items)
            by_rule[rule].append(((season_id, player_id), points, reached_at))
        for rule, rows in by_rule.items():
            cursor.execute(
                f"""
                INSERT INTO matches_playertotal AS t
                    (season_id, player_id, points, reached_at, version, mirrored_version,
                     updated_at)
                SELECT s, p, pts, r, 1, 0, %s
                FROM unnest(%s::bigint[], %s::text[], %s::int[], %s::timestamptz[])
                    AS c(s, p, pts, r)
                ORDER BY s, p
                ON CONFLICT (season_id, player_id) DO UPDATE SET {_MERGE_SQL[rule]},
                    version = t.version + 1,
                    updated_at = excluded.updated_at
                RETURNING id, season_id, player_id, points
                """,  # noqa: S608 - the merge clause comes from a fixed table above
                [
                    now,
                    [row[0][0] for row in rows],
                    [row[0][1] for row in rows],
                    [row[1] for row in rows],
                    [row[2] for row in rows],
                ],
            )
            for total_id, season_id, player_id, points in cursor.fetchall():
                totals[(season_id, player_id)] = points
                total_ids.append(total_id)

        missing = sorted({(i.season.id, i.result.player_id) for i in items} - totals.keys())
        if missing:
            cursor.execute(
                """
                SELECT season_id, player_id, points FROM matches_playertotal
                WHERE (season_id, player_id) IN (
                    SELECT * FROM unnest(%s::bigint[], %s::text[]))
                """,
                [[m[0] for m in missing], [m[1] for m in missing]],
            )
            for season_id, player_id, points in cursor.fetchall():
                totals[(season_id, player_id)] = points

    return _outcomes(items, inserted, totals, first_of), total_ids


def _outcomes(
    items: list[_Item],
    inserted: set[tuple[int, str, str]],
    totals: dict[tuple[int, str], int],
    first_of: dict[tuple[int, str, str], _Item],
) -> list[ResultOutcome]:
    """One outcome per item, in request order. On sum boards an accepted result reports the
    player's running total right after it; otherwise the total once the request committed."""
    accepted = {item.index for key, item in first_of.items() if key in inserted}
    later_points: dict[tuple[int, str], int] = defaultdict(int)
    total_after: dict[int, int] = {}
    for item in reversed(items):
        player_key = (item.season.id, item.result.player_id)
        total = totals.get(player_key, 0)
        if item.index in accepted and _rule(item.board) == "sum":
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
            season=item.season.slug,
            points=item.result.points,
            total_points=total_after[item.index],
            ended_at=item.ended_at,
        )
        for item in items
    ]


def player_upsert(
    *, player_id: str, display_name: str | None = None, avatar_url: str | None = None
) -> tuple[Player, bool]:
    """Create a player's profile or change the fields given; returns it and whether it is new."""
    from leaderboards.selectors import profiles_forget

    changes = {
        name: value
        for name, value in (("display_name", display_name), ("avatar_url", avatar_url))
        if value is not None
    }
    with transaction.atomic():
        player, created = Player.objects.select_for_update().get_or_create(
            player_id=player_id, defaults=changes
        )
        if changes and not created:
            for name, value in changes.items():
                setattr(player, name, value)
            player.save(update_fields=[*changes, "updated_at"])
        transaction.on_commit(lambda: profiles_forget([player_id]))
    return player, created


def player_ban(*, player_id: str, reason: str = "") -> Player:
    """Ban a cheater: off every live board now, out of archives made from now on; results they
    post are stored but not counted. Waits for results of theirs already in flight."""
    from leaderboards.tasks import refresh_player_standings

    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [BANS_LOCK])
        player = Player.objects.select_for_update().get(player_id=player_id)
        if player.banned_at is None:
            player.banned_at = timezone.now()
            player.ban_reason = reason
            player.save(update_fields=["banned_at", "ban_reason", "updated_at"])
        transaction.on_commit(lambda: refresh_player_standings.delay(player_id))
    return player


def player_unban(*, player_id: str) -> Player:
    """Lift a ban: the player's standing returns exactly as PostgreSQL has it (results posted
    during the ban stay uncounted)."""
    from leaderboards.tasks import refresh_player_standings

    with transaction.atomic():
        player = Player.objects.select_for_update().get(player_id=player_id)
        if player.banned_at is not None:
            player.banned_at = None
            player.ban_reason = ""
            player.save(update_fields=["banned_at", "ban_reason", "updated_at"])
        transaction.on_commit(lambda: refresh_player_standings.delay(player_id))
    return player
