"""Reconciliation: find and repair every difference between PostgreSQL's totals and the ZSETs.

Each run checks the players whose totals changed since the last completed run (its recent pass)
and one more page of a walk through the whole season, so over time every entry is checked. The
recent pass starts from a point kept in Redis beside the sets (store.checked_through): a Redis
that came back older than it was took that point back with it, so mirror writes it lost, of any
number, are re-checked and repaired by the next run. Repairs are compare-and-set, so a repair
never overwrites a newer score the mirror wrote meanwhile. Drift is zero in normal operation;
when it is not, it is logged and recorded (and exported as a metric). A ZSET that lost most of
its members (its Redis, or its Cluster node, restarted empty) is rebuilt whole instead, at once.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import Q
from django.utils import timezone

from audit.models import OperatorAction, OperatorActionKind
from matches.models import PendingStanding, Player, PlayerTotal
from seasons.locks import SeasonBusy
from seasons.models import Season, SeasonState, SortOrder
from seasons.scoring import composite_sql

from . import profiles, services, store
from .models import ReconciliationRun
from .segments import segment_entries

logger = logging.getLogger(__name__)

# The recent pass of a season never checked before (or of a Redis gone back to before its first
# check) starts when its set was marked whole, at most this long ago.
RECENT = timedelta(minutes=10)
# The recent pass also re-checks this long before the point its last run left: a result's
# transaction commits within this long of its request's clock (its received_at), and the web
# processes' clocks agree with the workers' within it.
RECENT_OVERLAP = timedelta(seconds=30)
# A season last checked longer ago than this (reconciliation stopped, or a Redis restored from an
# old copy) is rebuilt whole rather than re-checked result by result.
RECENT_REBUILD_AFTER = timedelta(hours=1)
# Players the walk checks per season and run (every minute), at least: a season of up to 12
# million players is walked through in WALK_RUNS runs, two hours, with pages of this size.
WALK_PAGE = 100_000
# A larger season's pages grow so that its walk still takes WALK_RUNS runs (833,334 players a
# run at 100 million): a check costs about 50 µs of the worker's, PostgreSQL's and Redis's CPU
# together by estimate; measured at 100 million on one 2-core box, a run took 47 s, most of it
# reading the page's players, names and strangers (docs/operations.md).
WALK_RUNS = 120
# ZSET members one run looks at for strangers, at least (more on a larger set, as the walk).
STRANGER_SCAN = 100_000
CHUNK = 1000
# Players of the walk's page each run first looks up: when more than half of those PostgreSQL
# ranks are missing from the ZSET, the set was lost, not drifted (drift is zero in normal
# operation), and the walk would take a run per WALK_PAGE players to put it back.
LOST_SAMPLE = CHUNK


@dataclass
class Tally:
    checked: int = 0
    drift: int = 0
    fixed: int = 0


# The reads of a chunk of players name them in one text parameter, split by PostgreSQL: an ORM
# `__in` of a thousand ids, or a list bound as an array, cost more in Python (each id prepared
# and quoted, client-side) than PostgreSQL took to answer. A player id holds no comma (its
# check constraint). The totals' composites are computed by PostgreSQL, by the same arithmetic
# as composite_for (seasons/scoring.py), so no timestamp is loaded into Python.
_OF_CHUNK = "season_id = %(season)s AND player_id = ANY(string_to_array(%(players)s, ','))"
# The chunk's players with a standing of the season in the mirror's outbox (each row holds one
# write's standings by season: {"<season id>": [["<player id>", composite], ...]}).
_PENDING = f"""
    SELECT standing ->> 0 FROM {PendingStanding._meta.db_table} p,
        jsonb_array_elements(p.standings -> %(season)s::text) AS standing
    WHERE p.standings ? %(season)s::text
      AND standing ->> 0 = ANY(string_to_array(%(players)s, ','))
"""
_KNOWN = f"SELECT player_id FROM {PlayerTotal._meta.db_table} WHERE {_OF_CHUNK}"
_COMPOSITE = composite_sql(
    points="t.points",
    reached_at="t.reached_at",
    starts_at="%(starts_at)s",
    lowest_first="%(lowest_first)s",
)
_TOTALS = f"""
    SELECT player_id, CASE WHEN p.banned_at IS NULL THEN {_COMPOSITE} END
    FROM {PlayerTotal._meta.db_table} t JOIN {Player._meta.db_table} p USING (player_id)
    WHERE t.{_OF_CHUNK}
"""


def _rows(query: str, season: Season, player_ids: list[str]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(
            query,
            {
                "season": season.pk,
                "players": ",".join(player_ids),
                "starts_at": season.starts_at,
                "lowest_first": season.board.sort_order == SortOrder.LOWEST_FIRST,
            },
        )
        return cursor.fetchall()


def _expected(season: Season, player_ids: list[str]) -> dict[str, int | None]:
    """What each player's ZSET entry must be per PostgreSQL (None: no entry), leaving out the
    players with a standing still in the mirror's outbox: that is lag for the mirror, not drift."""
    if not player_ids:
        return {}
    pending = {row[0] for row in _rows(_PENDING, season, player_ids)}
    return {
        player_id: composite
        for player_id, composite in _rows(_TOTALS, season, player_ids)
        if player_id not in pending
    }


def _stored(season: Season, player_ids: list[str]) -> dict[str, int | None]:
    scores = store.scores_of(season.pk, player_ids, shards=season.shards)
    return dict(zip(player_ids, scores, strict=True))


def _check(season: Season, player_ids: list[str], tally: Tally) -> None:
    """Compare these players' totals with the ZSET and repair what differs.

    A difference is looked at twice before it counts: a mirror write landing between the two
    reads (Redis, then PostgreSQL) would otherwise look like drift. Repairs are compare-and-set,
    so one never overwrites a newer score the mirror wrote in between.
    """
    for start in range(0, len(player_ids), CHUNK):
        chunk = player_ids[start : start + CHUNK]
        stored = _stored(season, chunk)
        expected = _expected(season, chunk)
        tally.checked += len(expected)
        differing = [p for p, composite in expected.items() if stored[p] != composite]
        _check_segments(season, [p for p in expected if p not in differing], stored, tally)
        if not differing:
            continue
        stored = _stored(season, differing)
        expected = _expected(season, differing)
        entries = segment_entries(differing, season.board)
        for player_id, composite in expected.items():
            current = stored[player_id]
            if current == composite:
                continue
            tally.drift += 1
            if store.compare_and_set(
                season.pk,
                player_id,
                expected=current,
                composite=composite,
                shards=season.shards,
                segments=entries.get(player_id, ""),
            ):
                tally.fixed += 1
            logger.warning(
                "drift in season %s for %s: redis %s, postgres %s",
                season.pk,
                player_id,
                current,
                composite,
            )


def _stamp(entry: str | None) -> int:
    return -1 if not entry else int(entry.split("|", 1)[0])


def _check_segments(
    season: Season, player_ids: list[str], stored: dict[str, int | None], tally: Tally
) -> None:
    """Players whose scores agree but whose segment values Redis holds older than PostgreSQL
    has them (a Redis back from an older copy, after the refresh that moved them): moved, by a
    compare-and-set of the score they have. A value Redis holds newer than the one just read is
    a change committed since, not drift."""
    if not player_ids:
        return
    entries = segment_entries(player_ids, season.board)
    held = store.segment_entries_held(season.pk, player_ids, shards=season.shards)
    for player_id in player_ids:
        entry = entries.get(player_id, "")
        if _stamp(entry) <= _stamp(held[player_id]):
            continue
        tally.drift += 1
        if store.compare_and_set(
            season.pk,
            player_id,
            expected=stored[player_id],
            composite=stored[player_id],
            shards=season.shards,
            segments=entry,
        ):
            tally.fixed += 1
        logger.warning(
            "segment drift in season %s for %s: redis %r, postgres %r",
            season.pk,
            player_id,
            held[player_id],
            entry,
        )


def _recent_since(season: Season, now: datetime) -> datetime:
    """Where the recent pass starts: the point the last completed pass (or rebuild) left in
    Redis, RECENT_OVERLAP before it."""
    through = store.checked_through(season.pk, shards=season.shards)
    if through is None:
        marked = season.standings_whole_since
        start = now - RECENT if marked is None else max(marked, now - RECENT)
    else:
        start = datetime.fromtimestamp(through, tz=UTC)
    return start - RECENT_OVERLAP


def _recent_players(season: Season, since: datetime) -> list[str]:
    """The players whose totals changed since `since`: those with results received since (the
    results' BRIN index on received_at finds them), and those whose results an operator voided,
    or who were banned or unbanned, since (the audit log)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT player_id FROM matches_matchresult"
            " WHERE season_id = %s AND received_at >= %s",
            [season.pk, since],
        )
        players = {row[0] for row in cursor.fetchall()}
    voided = Q(action=OperatorActionKind.VOID_RESULT, board=season.board.slug, season=season.slug)
    bans = Q(action__in=[OperatorActionKind.BAN, OperatorActionKind.UNBAN])
    players.update(
        OperatorAction.objects.filter(voided | bans, at__gte=since).values_list(
            "player_id", flat=True
        )
    )
    return sorted(players)


def _missing(season: Season, player_ids: list[str]) -> tuple[Tally, dict[int, str]]:
    """How many of these players PostgreSQL ranks (`checked`) have no ZSET entry (`drift`), on
    the shard that lost the most of them (a sharded season's node may be lost alone), and a
    player found in each shard. PostgreSQL is read first: a player it ranks whose standing is
    not in the outbox has been mirrored already, so a missing entry is never the mirror's lag."""
    ranked = [p for p, composite in _expected(season, player_ids).items() if composite is not None]
    scores = store.scores_of(season.pk, ranked, shards=season.shards)
    by_shard: dict[int, Tally] = {}
    present: dict[int, str] = {}
    for player_id, score in zip(ranked, scores, strict=True):
        shard = store.shard_of(player_id, season.shards)
        tally = by_shard.setdefault(shard, Tally())
        tally.checked += 1
        tally.drift += score is None
        if score is not None:
            present[shard] = player_id
    worst = max(by_shard.values(), key=lambda t: t.drift / t.checked, default=Tally())
    return worst, present


def _rebuild_lost(season: Season, sample: Tally, now: datetime, why: str | None = None) -> Tally:
    """Rebuild a season whose ZSET was lost (its whole marker gone, or most of its members), or
    last checked too long ago (`why`), from PostgreSQL, and record the sample as the run's walk."""
    if why is None:
        why = f"standings lost in Redis ({sample.drift} of {sample.checked} sampled missing)"
    logger.warning("season %s: %s; rebuilding", season.pk, why)
    try:
        services.season_rebuild_standings(season=season)
    except SeasonBusy:
        logger.info("season %s is being closed or rebuilt already", season.pk)
        return Tally(sample.checked, sample.drift, 0)
    rebuilt = Tally(sample.checked, sample.drift, sample.drift)
    _record(season, ReconciliationRun.Kind.WALK, rebuilt, now)
    return rebuilt


def season_reconcile(*, season: Season, now: datetime | None = None) -> Tally:
    now = now or timezone.now()
    # Its size read from its ZSET once a run (counting its totals would cost more than a check).
    size = store.board_size(season.pk, shards=season.shards)
    page_size = walk_page(size)
    page = walk_page_players(season, page_size)
    sample, present = _missing(season, page[:LOST_SAMPLE])
    marked = season.standings_whole_since is not None
    if sample.drift * 2 > sample.checked or (
        marked and not store.standings_whole(season.pk, shards=season.shards)
    ):
        return _rebuild_lost(season, sample, now)
    if not marked:
        # Never marked whole (no result mirrored yet, or kept from before the marker), and
        # not lost by the sample: from now on a loss of it is found.
        services.season_standings_mark_first(
            season_id=season.pk, shards=season.shards, present=present
        )

    since = _recent_since(season, now)
    if since < now - RECENT_REBUILD_AFTER:
        return _rebuild_lost(season, sample, now, f"last checked before {since.isoformat()}")
    recent = Tally()
    _check(season, _recent_players(season, since), recent)
    _record(season, ReconciliationRun.Kind.RECENT, recent, now)
    # Written after the comparisons, so it is in Redis only with what they found there.
    services.season_checked_through(season=season, at=now)

    walk = Tally()
    _check(season, page, walk)
    _profiles_repair(page)
    # The walk starts over once it reached the end of the season.
    last = page[-1] if len(page) == page_size else ""
    # Members PostgreSQL does not know have no total to compare against: a scan of Redis.
    walk.drift += _remove_strangers(season, walk, _per_run(size, STRANGER_SCAN))
    Season.objects.filter(pk=season.pk).update(reconcile_cursor=last)
    season.reconcile_cursor = last
    _record(season, ReconciliationRun.Kind.WALK, walk, now)
    return Tally(
        recent.checked + walk.checked, recent.drift + walk.drift, recent.fixed + walk.fixed
    )


def _profiles_repair(player_ids: list[str]) -> None:
    """The walk's players' names too: a profile change whose filing failed is filed now."""
    filed = sum(
        profiles.profiles_repair(player_ids[start : start + CHUNK])
        for start in range(0, len(player_ids), CHUNK)
    )
    if filed:
        logger.info("filed %d profiles the directory lacked or held older", filed)


def walk_page(size: int) -> int:
    """How many players of a season of `size` each run's walk checks (a whole walk takes
    size / walk_page(size) runs, one a minute)."""
    return _per_run(size, WALK_PAGE)


def walk_page_players(season: Season, page_size: int) -> list[str]:
    """The players the season's next run walks: `page_size` of them after its cursor."""
    return list(
        PlayerTotal.objects.filter(season=season, player_id__gt=season.reconcile_cursor)
        .order_by("player_id")
        .values_list("player_id", flat=True)[:page_size]
    )


def _per_run(size: int, least: int) -> int:
    """How many players a run checks of a season of `size`: `least`, or on a larger season as
    many as walk it through in WALK_RUNS runs."""
    return max(least, -(-size // WALK_RUNS))


def _remove_strangers(season: Season, tally: Tally, scan: int) -> int:
    """Members PostgreSQL has no total for, found by one stretch (`scan` members) of a scan
    through the ZSET that the next run resumes (ZSCAN's cursor, kept in Redis): every member is
    looked at in turn, and no run reads a whole board. Returns how many it found."""
    cursor = store.reconcile_scan_cursor(season.pk)
    strangers = scanned = 0
    while True:
        cursor, members = store.scan_standings(
            season.pk, cursor=cursor, count=CHUNK, shards=season.shards
        )
        known = {row[0] for row in _rows(_KNOWN, season, [p for p, _ in members])}
        for player_id, composite in members:
            if player_id in known:
                continue
            strangers += 1
            if store.compare_and_set(
                season.pk, player_id, expected=composite, composite=None, shards=season.shards
            ):
                tally.fixed += 1
        scanned += len(members)
        if cursor == 0 or scanned >= scan:
            break
    store.reconcile_scan_cursor_set(season.pk, cursor)
    if strangers:
        logger.warning("season %s: removed %d players unknown to PostgreSQL", season.pk, strangers)
    return strangers


def _record(season: Season, kind: str, tally: Tally, started_at: datetime) -> None:
    ReconciliationRun.objects.create(
        season=season,
        kind=kind,
        checked=tally.checked,
        drift=tally.drift,
        fixed=tally.fixed,
        started_at=started_at,
        finished_at=timezone.now(),
    )


def _live_seasons() -> Iterable[Season]:
    return Season.objects.exclude(state=SeasonState.CLOSED).select_related("board")


def seasons_reconcile(*, now: datetime | None = None) -> int:
    """Reconcile every season not closed yet; returns the drift found."""
    # Redis holding another database's standings now (brought back from elsewhere) loses them
    # before anything of them is compared or kept (store/database.py).
    store.identity_claim()
    drift = 0
    for season in _live_seasons():
        # Each season on its own: one that fails (Redis refusing its key, say) is logged and
        # the others are still checked.
        try:
            drift += season_reconcile(season=season, now=now).drift
        except Exception:
            logger.exception("reconciling season %s failed", season.pk)
    ReconciliationRun.objects.filter(finished_at__lt=timezone.now() - timedelta(days=7)).delete()
    return drift
