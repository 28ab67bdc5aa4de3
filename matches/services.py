"""The write path: record match results and player totals in PostgreSQL, then queue the mirror.

A result is confirmed only once its transaction has committed; the Redis mirror runs after the
commit (transaction.on_commit), so a crash between the two only delays the leaderboard, and the
sweep in leaderboards/services.py catches up whatever was committed but not mirrored.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import NamedTuple

import orjson
from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import IntegrityError, connection, transaction
from django.db.backends.utils import CursorWrapper
from django.utils import timezone

from audit.models import OperatorActionKind
from audit.services import operator_action_record
from config.caching import RecentAnswers
from config.errors import Conflict, Forbidden, InvalidInput, NotFound
from seasons.models import DEFAULT_BOARD, Board, ScoreOperator, Season, SeasonState
from seasons.scoring import MAX_POINTS, composite_sql

from . import metrics, outbox
from .models import MatchResult, PendingPlayerRefresh, Player

# The advisory lock that orders bans against results being written (any fixed 64-bit number).
BANS_LOCK = 7_466_921_042

# Boards by slug (None: no such board), reused for LEADERBOARD_SEASON_CACHE_SECONDS: a board's
# rules and limits change rarely, and every request needs them.
board_lookups_cache: RecentAnswers[Board | None] = RecentAnswers(
    seconds=lambda: settings.LEADERBOARD_SEASON_CACHE_SECONDS, maxsize=lambda: 1024
)


@dataclass(frozen=True, slots=True)
class PostedResult:
    """A result as a game server posted it, checked field by field (matches.api)."""

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


class ResultKey(NamedTuple):
    """What makes a result unique: a match counts once per board and player."""

    board_id: int
    match_id: str
    player_id: str


class PlayerSeason(NamedTuple):
    """Whose total: a player's in one season."""

    season_id: int
    player_id: str


class SeasonRef(NamedTuple):
    id: int
    slug: str


class StoredResult(NamedTuple):
    """A result already in the table, found for a request's result that was not inserted."""

    points: int
    season: SeasonRef


class Contribution(NamedTuple):
    """What one request's new results add to one player's season total."""

    player_season: PlayerSeason
    points: int
    reached_at: datetime
    # The first of those results: its season and board give the total's scoring rules.
    first: _Item


@dataclass(slots=True)
class _Item:
    index: int
    result: PostedResult
    board: Board
    # None when no season takes the result now; `refusal` says why, and stands unless the
    # result turns out to be stored already (a retry is a duplicate whatever the clock says).
    season: Season | None
    ended_at: datetime
    refusal: Conflict | None = None
    key: ResultKey = field(init=False)

    def __post_init__(self) -> None:
        self.key = ResultKey(self.board.id, self.result.match_id, self.result.player_id)


def _item_details(index: int, batch: bool) -> dict[str, int] | None:
    """An error's details that name the batch item it is about (none for a single result)."""
    return {"index": index} if batch else None


def _item_prefix(index: int, batch: bool) -> str:
    """The start of an error's message that names the batch item it is about."""
    return f"Item {index}: " if batch else ""


def _boards(slugs: set[str]) -> dict[str, Board]:
    boards = {
        slug: board_lookups_cache.get_or_build(
            slug, lambda slug=slug: Board.objects.filter(slug=slug).first()
        )
        for slug in slugs
    }
    return {slug: board for slug, board in boards.items() if board is not None}


def _resolve(
    results: Sequence[PostedResult],
    now: datetime,
    batch: bool,
    allowed_boards: frozenset[str] | None,
) -> list[_Item]:
    """Find each result's board and season, holding a share lock on the seasons so the close job
    cannot mark one closing while this transaction writes into it, and the writers' share of the
    bans lock (see player_ban), in one round trip."""
    boards = _boards({r.board or DEFAULT_BOARD for r in results})
    for index, result in enumerate(results):
        slug = result.board or DEFAULT_BOARD
        if slug not in boards:
            raise NotFound(
                f"{_item_prefix(index, batch)}unknown board '{slug}'.",
                code="board_not_found",
                details=_item_details(index, batch),
            )
        if allowed_boards is not None and slug not in allowed_boards:
            raise Forbidden(
                f"{_item_prefix(index, batch)}this game-server key may not post to board '{slug}'.",
                code="board_not_allowed",
                details=_item_details(index, batch),
            )
        limit = boards[slug].max_points_per_result
        if limit is not None and result.points > limit:
            raise InvalidInput(
                f"{_item_prefix(index, batch)}{result.points} points is more than board '{slug}' "
                f"allows for one result ({limit}).",
                code="points_over_limit",
                details={**(_item_details(index, batch) or {}), "max_points_per_result": limit},
            )
    ended = [r.ended_at or now for r in results]
    explicit = {r.season for r in results if r.season}
    seasons = list(
        Season.objects.raw(
            """
            SELECT *, pg_advisory_xact_lock_shared(%s) AS bans_lock FROM seasons_season
            WHERE board_id = ANY(%s)
              AND (slug = ANY(%s) OR (starts_at <= %s AND ends_at > %s))
            ORDER BY id
            FOR SHARE
            """,
            [BANS_LOCK, [b.id for b in boards.values()], list(explicit), max(ended), min(ended)],
        )
    )
    by_board: dict[int, list[Season]] = defaultdict(list)
    board_of = {board.id: board for board in boards.values()}
    for season in seasons:
        # The season row came without its board; the cached one is the same row.
        season.board = board_of[season.board_id]
        by_board[season.board_id].append(season)

    items: list[_Item] = []
    for index, (result, ended_at) in enumerate(zip(results, ended, strict=True)):
        board = boards[result.board or DEFAULT_BOARD]
        candidates = by_board[board.id]
        season: Season | None
        refusal: Conflict | None = None
        if result.season:
            season = next((s for s in candidates if s.slug == result.season), None)
            if season is None:
                raise NotFound(
                    f"{_item_prefix(index, batch)}board '{board.slug}' has no season "
                    f"'{result.season}'.",
                    code="season_not_found",
                    details=_item_details(index, batch),
                )
            if not season.holds(ended_at):
                refusal = Conflict(
                    f"{_item_prefix(index, batch)}the result ended outside season "
                    f"'{season.slug}' ({season.starts_at.isoformat()} to "
                    f"{season.ends_at.isoformat()}).",
                    code="season_closed",
                    details=_item_details(index, batch),
                )
        else:
            season = next((s for s in candidates if s.holds(ended_at)), None)
            if season is None:
                refusal = Conflict(
                    f"{_item_prefix(index, batch)}board '{board.slug}' has no season running at "
                    f"{ended_at.isoformat()}.",
                    code="no_active_season",
                    details=_item_details(index, batch),
                )
        if (
            season is not None
            and refusal is None
            and (season.state != SeasonState.OPEN or now >= season.accepts_until)
        ):
            refusal = Conflict(
                f"{_item_prefix(index, batch)}season '{season.slug}' is closed to new results.",
                code="season_closed",
                details=_item_details(index, batch),
            )
        items.append(_Item(index, result, board, None if refusal else season, ended_at, refusal))
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

# Banned players' results are stored uncounted; a temporary ban counts until its end, to the
# request's clock, whether or not the unban task has lifted it yet. The bans lock taken in
# _resolve makes the banned
# list current: this statement's snapshot is taken after it was granted. The banned players are
# found through a partial index of them alone, so the check costs no read of the players' table.
#
# Rows arrive as one JSON document, not as arrays: psycopg builds array parameters element by
# element in Python, which was most of a 100-result request's time in the web process.
_INSERT_RESULTS_SQL = """
WITH r AS (
    SELECT * FROM json_to_recordset(%(results)s::json)
        AS r(b bigint, s bigint, m text, p text, pts integer, e timestamptz)
), banned AS (
    SELECT coalesce(array_agg(player_id), '{}') AS ids FROM matches_player
    WHERE player_id IN (SELECT p FROM r) AND banned_at IS NOT NULL
      AND (banned_until IS NULL OR banned_until > %(now)s)
)
INSERT INTO matches_matchresult
    (board_id, season_id, match_id, player_id, points, ended_at, received_at, counted)
SELECT r.b, r.s, r.m, r.p, r.pts, r.e, %(now)s, r.p <> ALL(banned.ids)
FROM r, banned
ORDER BY r.b, r.m, r.p
ON CONFLICT (board_id, match_id, player_id) DO NOTHING
RETURNING board_id, match_id, player_id, counted
"""

# Upsert the totals, compute each new composite score from the row just written, and put it
# in the mirror's outbox: one statement, so the mirror never reads the totals back.
#
# A player is created with their first total of a season (a player starting a second season
# costs one more probe, answered "exists"): checking every result's player against the
# players' table cost a read of a random page of it per result, at ten million players most
# of PostgreSQL's time. `fresh` is read from the statement's snapshot, before its own upsert;
# the foreign key of the new totals is checked at the end of the statement, after the players.
_UPSERT_TOTALS_SQL = """
WITH contribution AS (
    SELECT * FROM json_to_recordset(%(contributions)s::json)
        AS c(season_id bigint, player_id text, points integer, reached_at timestamptz,
             starts_at timestamptz, lowest_first boolean)
), fresh AS (
    INSERT INTO matches_player
        (player_id, display_name, avatar_url, ban_reason, created_at, updated_at)
    SELECT DISTINCT c.player_id, '', '', '', %(now)s::timestamptz, %(now)s::timestamptz
    FROM contribution c
    WHERE NOT EXISTS (
        SELECT 1 FROM matches_playertotal t
        WHERE t.season_id = c.season_id AND t.player_id = c.player_id)
    ORDER BY c.player_id
    ON CONFLICT (player_id) DO NOTHING
), total AS (
    INSERT INTO matches_playertotal AS t (season_id, player_id, points, reached_at, updated_at)
    SELECT season_id, player_id, points, reached_at, %(now)s FROM contribution
    ORDER BY season_id, player_id
    ON CONFLICT (season_id, player_id) DO UPDATE SET {merge},
        updated_at = excluded.updated_at
    RETURNING t.season_id, t.player_id, t.points, t.reached_at
), pending AS (
    INSERT INTO matches_pendingstanding (season_id, player_id, composite, changed_at)
    SELECT total.season_id, total.player_id, {composite}, %(now)s
    FROM total JOIN contribution USING (season_id, player_id)
    RETURNING id, season_id, player_id, composite
)
SELECT pending.id, pending.season_id, pending.player_id, pending.composite, total.points
FROM pending JOIN total USING (season_id, player_id)
"""


def _json(rows: list[dict[str, object]]) -> str:
    """Rows as one JSON document for json_to_recordset; orjson writes aware datetimes as
    RFC 3339, which PostgreSQL reads as timestamptz."""
    return orjson.dumps(rows).decode()


def _rule(board: Board) -> str:
    if board.score_operator == ScoreOperator.SUM:
        return "sum"
    return "best_lowest" if board.lowest_first else "best_highest"


def _contribution(rule: str, items: list[_Item]) -> tuple[int, datetime]:
    """What a request's new results for one player add to the total, and when it was reached."""
    if rule == "sum":
        return sum(i.result.points for i in items), max(i.ended_at for i in items)
    points = [i.result.points for i in items]
    best = min(points) if rule == "best_lowest" else max(points)
    return best, min(i.ended_at for i in items if i.result.points == best)


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
                f"{_item_prefix(index, batch)}ended_at may not be in the future.",
                details={
                    **(_item_details(index, batch) or {}),
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
    items = _resolve(results, now, batch, allowed_boards)
    first_of = _first_of_each_result(items, batch)
    # Sorted keys everywhere: concurrent requests lock rows in one order, so never deadlock.
    to_insert = sorted((key, item) for key, item in first_of.items() if item.season is not None)

    with connection.cursor() as cursor:
        inserted = _results_insert(cursor, to_insert, now)
        stored = _stored_results(
            cursor, [key for key in sorted(first_of) if key not in inserted], first_of, batch
        )
        totals: dict[PlayerSeason, int] = {}
        changes: list[outbox.StandingChange] = []
        for rule, contributions in _contributions_by_rule(to_insert, inserted, batch).items():
            changes.extend(_totals_upsert(cursor, rule, contributions, now, totals))

        # Where each item stands: its own season, or for a duplicate the stored result's.
        season_of = {item.index: _season_of(first_of[item.key], inserted, stored) for item in items}
        _totals_read(
            cursor,
            {PlayerSeason(season_of[i.index].id, i.result.player_id) for i in items},
            totals,
        )

    accepted = {item.index for key, item in first_of.items() if key in inserted}
    return _outcomes(items, accepted, totals, season_of), changes


def _first_of_each_result(items: list[_Item], batch: bool) -> dict[ResultKey, _Item]:
    """The same (board, match, player) twice in one request: the first one counts, and a later
    one with other points is a conflict."""
    first_of: dict[ResultKey, _Item] = {}
    for item in items:
        if item.key not in first_of:
            first_of[item.key] = item
        elif first_of[item.key].result.points != item.result.points:
            raise Conflict(
                f"{_item_prefix(item.index, batch)}match '{item.result.match_id}' already has a "
                f"different result for player '{item.result.player_id}' in this request.",
                code="conflict",
                details=_item_details(item.index, batch),
            )
    return first_of


def _results_insert(
    cursor: CursorWrapper, to_insert: list[tuple[ResultKey, _Item]], now: datetime
) -> dict[ResultKey, bool]:
    """Insert the results not stored yet; returns each inserted one's key and whether it counts
    (not when its player is banned)."""
    if not to_insert:
        return {}
    rows = [
        {
            "b": key.board_id,
            "s": item.season.id,  # type: ignore[union-attr]
            "m": key.match_id,
            "p": key.player_id,
            "pts": item.result.points,
            "e": item.ended_at,
        }
        for key, item in to_insert
    ]
    cursor.execute(_INSERT_RESULTS_SQL, {"now": now, "results": _json(rows)})
    return {
        ResultKey(board_id, match_id, player_id): counted
        for board_id, match_id, player_id, counted in cursor.fetchall()
    }


def _contributions_by_rule(
    to_insert: list[tuple[ResultKey, _Item]], inserted: dict[ResultKey, bool], batch: bool
) -> dict[str, list[Contribution]]:
    """Each player's contribution from the counted results this request really inserted,
    grouped by the scoring rule that merges it into their total."""
    new_by_player: dict[PlayerSeason, list[_Item]] = defaultdict(list)
    for key, item in to_insert:
        if inserted.get(key):
            new_by_player[PlayerSeason(item.season.id, key.player_id)].append(item)  # type: ignore[union-attr]
    by_rule: dict[str, list[Contribution]] = defaultdict(list)
    for player_season, player_items in sorted(new_by_player.items()):
        rule = _rule(player_items[0].board)
        points, reached_at = _contribution(rule, player_items)
        if points > MAX_POINTS:
            raise Conflict(
                f"A player's season total may not pass {MAX_POINTS}.",
                code="total_limit_exceeded",
                details=_item_details(player_items[-1].index, batch),
            )
        by_rule[rule].append(Contribution(player_season, points, reached_at, player_items[0]))
    return by_rule


def _totals_read(
    cursor: CursorWrapper, wanted: set[PlayerSeason], totals: dict[PlayerSeason, int]
) -> None:
    """Add to `totals` the wanted ones no upsert returned (players whose results were all
    duplicates or refused)."""
    missing = sorted(wanted - totals.keys())
    if not missing:
        return
    cursor.execute(
        """
        SELECT season_id, player_id, points FROM matches_playertotal
        WHERE (season_id, player_id) IN (
            SELECT * FROM unnest(%s::bigint[], %s::text[]))
        """,
        [[m.season_id for m in missing], [m.player_id for m in missing]],
    )
    for season_id, player_id, points in cursor.fetchall():
        totals[PlayerSeason(season_id, player_id)] = points


def _season_of(
    first: _Item,
    inserted: dict[ResultKey, bool],
    stored: dict[ResultKey, SeasonRef],
) -> SeasonRef:
    if first.key in inserted and first.season is not None:
        return SeasonRef(first.season.id, first.season.slug)
    return stored[first.key]


def _stored_results(
    cursor: CursorWrapper,
    keys: list[ResultKey],
    first_of: dict[ResultKey, _Item],
    batch: bool,
) -> dict[ResultKey, SeasonRef]:
    """For results not inserted: the stored result makes a duplicate when its points agree (in
    whatever season it was stored), a conflict otherwise; with none stored, the item's refusal
    stands. Returns each duplicate's season."""
    if not keys:
        return {}
    cursor.execute(
        """
        SELECT r.board_id, r.match_id, r.player_id, r.points, s.id, s.slug
        FROM matches_matchresult r JOIN seasons_season s ON s.id = r.season_id
        WHERE (r.board_id, r.match_id, r.player_id) IN (
            SELECT * FROM unnest(%s::bigint[], %s::text[], %s::text[]))
        """,
        [
            [k.board_id for k in keys],
            [k.match_id for k in keys],
            [k.player_id for k in keys],
        ],
    )
    found = {
        ResultKey(board_id, match_id, player_id): StoredResult(points, SeasonRef(id, slug))
        for board_id, match_id, player_id, points, id, slug in cursor.fetchall()
    }
    seasons: dict[ResultKey, SeasonRef] = {}
    for key in keys:
        item = first_of[key]
        if key not in found:
            if item.refusal is not None:
                raise item.refusal
            # ON CONFLICT skipped it, so a committed row exists and this statement sees it.
            raise RuntimeError(f"result {key} neither inserted nor stored")
        stored = found[key]
        if stored.points != item.result.points:
            raise Conflict(
                f"{_item_prefix(item.index, batch)}match '{item.result.match_id}' already has "
                f"a different result ({stored.points} points) for player "
                f"'{item.result.player_id}'.",
                code="conflict",
                details=_item_details(item.index, batch),
            )
        seasons[key] = stored.season
    return seasons


def _totals_upsert(
    cursor: CursorWrapper,
    rule: str,
    contributions: list[Contribution],
    now: datetime,
    totals: dict[PlayerSeason, int],
) -> list[outbox.StandingChange]:
    """Merge the contributions of one rule into the totals; records each new total in `totals`
    and returns the new standings for the mirror."""
    sql = _UPSERT_TOTALS_SQL.format(
        merge=_MERGE_SQL[rule],
        composite=composite_sql(
            points="total.points",
            reached_at="total.reached_at",
            starts_at="contribution.starts_at",
            lowest_first="contribution.lowest_first",
        ),
    )
    cursor.execute(
        sql,
        {
            "now": now,
            "contributions": _json(
                [
                    {
                        "season_id": c.player_season.season_id,
                        "player_id": c.player_season.player_id,
                        "points": c.points,
                        "reached_at": c.reached_at,
                        "starts_at": c.first.season.starts_at,  # type: ignore[union-attr]
                        "lowest_first": c.first.board.lowest_first,
                    }
                    for c in contributions
                ]
            ),
        },
    )
    worsening_in: dict[int, bool] = {}
    for c in contributions:
        worsening_in.setdefault(c.player_season.season_id, c.first.board.standings_worsen)
    changes = []
    for pending_id, season_id, player_id, composite, points in cursor.fetchall():
        totals[PlayerSeason(season_id, player_id)] = points
        changes.append(
            outbox.StandingChange(
                pending_id, season_id, player_id, composite, worsening_in[season_id]
            )
        )
    return changes


def _outcomes(
    items: list[_Item],
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
            season=season_of[item.index].slug,
            points=item.result.points,
            total_points=total_after[item.index],
            ended_at=item.ended_at,
        )
        for item in items
    ]


def player_upsert(
    *,
    player_id: str,
    display_name: str | None = None,
    avatar_url: str | None = None,
    allowed_boards: frozenset[str] | None = None,
) -> tuple[Player, bool]:
    """Create a player's profile or change the fields given; returns it and whether it is new.

    `allowed_boards` is the posting key's scope (None: every board). A key limited to some
    boards may write only the profile of a player with a result on one of them, so one game's
    server cannot rename another game's players; a new player's profile is then written after
    their first result. Results are never deleted, so a player once in scope stays in it."""
    if allowed_boards is not None and not (
        MatchResult.objects.filter(player_id=player_id, board__slug__in=allowed_boards).exists()
    ):
        raise Forbidden(
            f"This game-server key may not change player '{player_id}': they have no result "
            "on its boards.",
            code="player_not_in_scope",
        )
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
        transaction.on_commit(lambda: outbox.profiles_committed([player_id]))
    return player, created


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
            _player_refresh_owe(player_id)
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
        _player_refresh_owe(player_id)
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
            player.banned_at = None
            player.banned_until = None
            player.ban_reason = ""
            player.save(update_fields=["banned_at", "banned_until", "ban_reason", "updated_at"])
        # Also when the player was not banned: repeating an unban refreshes the boards again.
        _player_refresh_owe(player_id)
    return player


def _player_refresh_owe(player_id: str) -> None:
    """In a ban's (or an unban's) transaction: the player's live boards owe a refresh, kept in
    PendingPlayerRefresh until Redis holds it and handed to the ranking store once this commits.
    The upsert waits for a refresh that holds the row, so a change committed while one runs is
    never deleted with a row that refresh read before it."""
    PendingPlayerRefresh.objects.bulk_create(
        [PendingPlayerRefresh(player_id=player_id, requested_at=timezone.now())],
        update_conflicts=True,
        unique_fields=["player"],
        update_fields=["requested_at"],
    )
    transaction.on_commit(lambda: outbox.player_committed(player_id))


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
