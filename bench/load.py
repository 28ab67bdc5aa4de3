"""A season of N players: its rows generated inside PostgreSQL (one result a player, drawn there),
then the project's own rebuild into Redis; and what the sorted set costs in memory."""

from __future__ import annotations

import contextlib
import random
import time
from datetime import datetime, timedelta
from typing import Any

import psycopg
import redis
from django.db import connection, models
from django.utils import timezone
from tqdm import tqdm

from leaderboards import store
from leaderboards.profiles import profiles_backfill
from leaderboards.services import season_rebuild_standings
from matches.models import (
    FRIENDS_MAX,
    Clan,
    FriendList,
    GameServer,
    MatchResult,
    PendingStanding,
    Player,
    PlayerSegment,
    PlayerTotal,
)
from seasons.models import Board, Season, SeasonState
from seasons.services import season_create

from .core import BenchError, Figures
from .environment import QUEUE, BenchEnvironment, connect
from .scores import LOADED_POINTS_MU, LOADED_POINTS_SIGMA, MAX_LOADED_POINTS
from .segments import CLAN_MEMBERS, COUNTRIES, PLATFORMS

BOARD = "bench"
PROJECTED_PLAYERS = 100_000_000
# Loaded results end this long before the run: reconciliation's recent pass sees only the run's.
LOADED_BEFORE = timedelta(hours=1)


def bench_reset(env: BenchEnvironment) -> None:
    """Empty the bench's own tables and keys (a run always starts from a season it loads)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE matches_matchresult, matches_playertotal, matches_pendingstanding,"
            " matches_playersegment, matches_player, matches_clan, seasons_season, seasons_board,"
            " matches_gameserver, seasons_archivedstanding RESTART IDENTITY CASCADE"
        )
    store.delete_prefixed_keys()
    redis_cleanup(env)


def season_reused(env: BenchEnvironment, *, players: int, segments: bool) -> Season | None:
    """The season a previous run loaded, when it is the only one, still open, segmented as asked
    and has `players` totals: its outbox and keys are emptied and its tables vacuumed so the
    rebuild and the phases start level. None: load a new one."""
    found = list(Season.objects.select_related("board")[:2])
    season = found[0] if len(found) == 1 and found[0].state == SeasonState.OPEN else None
    if season is None or bool(season.board.segment_dimensions) != segments:
        return None
    if PlayerTotal.objects.filter(season=season).count() != players:
        return None
    PendingStanding.objects.all().delete()
    GameServer.objects.all().delete()
    store.delete_prefixed_keys()
    redis_cleanup(env)
    # The runs before left dead rows behind their upserts: vacuumed as a fresh load ends, so a
    # reused season is measured on the same footing (unvacuumed, the push step slid run by run).
    with env.connect() as conn:
        for table in (PlayerTotal, MatchResult, PendingStanding):
            conn.execute(f"VACUUM (ANALYZE) {table._meta.db_table}")
    return season


# Players p0, p1, ... whose friends view the friends read asks for: each has the largest list.
FRIEND_LISTS = 1000


def friends_load(*, players: int, seed: int) -> dict[str, Any]:
    """Give the first FRIEND_LISTS players FRIENDS_MAX friends each, drawn from the whole board."""
    rng = random.Random(seed)
    owners = min(FRIEND_LISTS, players)
    started = time.perf_counter()
    FriendList.objects.all().delete()
    lists = []
    for owner in range(owners):
        drawn = rng.sample(range(players), min(FRIENDS_MAX + 1, players))
        friends = [f"p{n}" for n in drawn if n != owner][:FRIENDS_MAX]
        lists.append(FriendList(player_id=f"p{owner}", friend_ids=friends))
    FriendList.objects.bulk_create(lists, batch_size=100)
    each, seconds = len(lists[0].friend_ids) if lists else 0, time.perf_counter() - started
    return {"lists": owners, "friends_each": each, "seconds": round(seconds, 2)}


def redis_cleanup(env: BenchEnvironment) -> None:
    """Django's cache, and the bench broker's queues, Celery's unacknowledged set and kombu's
    bindings (the broker database is the bench's own)."""
    cache = redis.Redis.from_url(env.redis_url, socket_timeout=10)
    batch = list(cache.scan_iter(match=f"{env.cache_prefix}:*", count=1000))
    for start in range(0, len(batch), 1000):
        cache.unlink(*batch[start : start + 1000])
    broker = redis.Redis.from_url(env.broker_url, socket_timeout=10)
    keys = [QUEUE, "celery", "unacked", "unacked_index", "unacked_mutex"]
    broker.unlink(*keys, *broker.scan_iter(match="_kombu.binding*", count=1000))


# With --segments: the board's dimensions, and how many values each has, and players in clans of
# CLAN_MEMBERS (bench/segments.py's).
SEGMENT_DIMENSIONS = {"country": COUNTRIES, "platform": PLATFORMS}


def season_prepare(*, now: datetime, segments: bool = False) -> Season:
    """A season running now: it started 30 days ago and runs for 90 more (< 2^24 seconds)."""
    starts_at = (now - timedelta(days=30)).replace(second=0, microsecond=0)
    dimensions = list(SEGMENT_DIMENSIONS) if segments else []
    board, _ = Board.objects.get_or_create(
        slug=BOARD, defaults={"name": "Benchmark", "segment_dimensions": dimensions}
    )
    season = season_create(
        board=board, slug=f"r{now:%Y%m%d%H%M%S}", name=f"Benchmark run {now:%Y-%m-%d %H:%M}",
        starts_at=starts_at, ends_at=starts_at + timedelta(days=120),
    )  # fmt: skip
    return Season.objects.select_related("board").get(pk=season.pk)


def game_server_key() -> str:
    return GameServer.objects.create_key(name="bench harness")[1]


def _insert(model: type[models.Model], given: str, source: str) -> tuple[str, dict[str, Any]]:
    """INSERT INTO the model's table the columns given (`column expression; ...`) from `source`,
    and every other column with a default, as a parameter (a column added to the app later does
    not break the load); and those parameters."""
    columns, expressions = zip(*(item.split(" ", 1) for item in given.split("; ")), strict=True)
    columns, expressions, defaults = list(columns), list(expressions), {}
    for field in model._meta.concrete_fields:
        if field.column in columns or isinstance(field, models.AutoField):
            continue
        if field.has_default():
            value = field.get_default()
        elif getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
            value = timezone.now()
        elif field.null or field.db_default is not models.NOT_PROVIDED:
            continue
        else:
            raise BenchError(f"bench/load.py writes nothing into {field.column}: add it there")
        name = f"{model._meta.db_table}.{field.column}"
        columns.append(field.column)
        expressions.append(f"%({name})s")
        defaults[name] = field.get_db_prep_save(value, connection)
    into = f"INSERT INTO {model._meta.db_table} ({', '.join(columns)})"
    return f"{into} SELECT {', '.join(expressions)} {source}", defaults


# The keys and indexes of the tables loaded and the foreign keys that refer to those keys, as
# (order, drop, restore): an index built after the rows costs a fraction of adding each row to it.
_KEYS_AND_INDEXES = """
    SELECT CASE contype WHEN 'f' THEN 2 ELSE 0 END,
           format('ALTER TABLE %%s DROP CONSTRAINT %%I', conrelid::regclass, conname),
           format('ALTER TABLE %%s ADD CONSTRAINT %%I %%s', conrelid::regclass, conname,
                  pg_get_constraintdef(oid))
    FROM pg_constraint
    WHERE contype IN ('p', 'u', 'x') AND conrelid = ANY(%(tables)s::regclass[])
       OR contype = 'f' AND confrelid = ANY(%(tables)s::regclass[])
    UNION ALL
    SELECT 1, format('DROP INDEX %%s', indexrelid::regclass), pg_get_indexdef(indexrelid)
    FROM pg_index WHERE indrelid = ANY(%(tables)s::regclass[])
        AND indexrelid NOT IN (SELECT conindid FROM pg_constraint WHERE contype IN ('p', 'u', 'x'))
    ORDER BY 1, 2
"""
# Players first .. last, generated by PostgreSQL, and their one result's points and time, drawn
# once for the result and the total: Box-Muller on random(), seeded per range of players, so the
# distribution is bench/scores.py's but the draws are not Python's.
RANGE = 1_000_000  # players a statement writes, drawn from one seed
_PLAYERS = "FROM generate_series(%(first)s::bigint, %(last)s) AS i"
_DRAWN = f"""WITH drawn AS MATERIALIZED (
    SELECT i, least({MAX_LOADED_POINTS}, 1 + floor(exp({LOADED_POINTS_MU} + {LOADED_POINTS_SIGMA}
                * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()))))::int AS points,
           %(starts)s + floor(random() * %(span)s) * interval '1 microsecond' AS at
    {_PLAYERS}
), results AS ({{}}) """


def season_load(
    *, env: BenchEnvironment, season: Season, players: int, seed: int, history: bool = True
) -> Figures:
    """N players, one match result each, and their totals, generated inside PostgreSQL
    (bench/README.md, "What a run does", 1); nothing in the mirror's outbox: the rebuild follows.
    Without `history`, no match results: the players and their totals alone, which is all the
    rebuild, the reads, the close and the walk read (at 100 million players the results' table
    and its keys would not fit this machine's disk beside the rest)."""
    now = timezone.now()
    segmented, clan = int(bool(season.board.segment_dimensions)), f"'k' || i / {CLAN_MEMBERS}"
    into_results = _insert(MatchResult, "board_id %(board)s; season_id %(season)s; match_id"
                           " 'load-' || i / 10; player_id 'p' || i; points points; ended_at at;"
                           " received_at at", "FROM drawn")  # fmt: skip
    into_totals = _insert(PlayerTotal, "season_id %(season)s; player_id 'p' || i; points points;"
                          " reached_at at; updated_at at", "FROM drawn")  # fmt: skip
    inserts = (  # (the statement for players first .. last, its defaults)
        *([_insert(Clan, f"clan_id {clan}; name 'Clan ' || i / {CLAN_MEMBERS}",
                   f"FROM generate_series(%(first)s, %(last)s, {CLAN_MEMBERS}) AS i")]
          if segmented else []),
        _insert(Player, "player_id 'p' || i; display_name 'Player ' || i; avatar_url '';"
                f" created_at %(now)s; updated_at %(now)s; segments_changes {segmented};"
                f" clan_id {clan if segmented else 'NULL'}", _PLAYERS),
        # A player's value in each dimension, spread as bench/segments.py spreads them.
        *([_insert(PlayerSegment, "player_id 'p' || i; dimension d; value CASE d WHEN 'country'"
                   f" THEN 'c' || lpad((i * 7919 %% {COUNTRIES})::text, 2, '0') ELSE 'x' ||"
                   f" i %% {PLATFORMS} END", f"{_PLAYERS}, unnest('{{country,platform}}'::text[])"
                   " AS d")]
          if segmented else []),
        # Matches of ten players each (a CTE of no rows the statement never reads, without them).
        (_DRAWN.format(into_results[0] if history else "SELECT 1") + into_totals[0],
         into_results[1] | into_totals[1]),
    )  # fmt: skip
    span = max(60, int((now - LOADED_BEFORE - season.starts_at).total_seconds())) * 10**6
    given = {"season": season.pk, "board": season.board_id, "now": now, "span": span,
             "starts": season.starts_at}  # fmt: skip
    tables = [m._meta.db_table for m in (Clan, Player, PlayerSegment, MatchResult, PlayerTotal)]
    started = time.perf_counter()
    # One transaction: a load that fails or is stopped leaves the tables and keys as they were.
    with connect(env.database_url) as conn, conn.transaction():
        # As pg_restore --disable-triggers: the rows are consistent by construction, and per-row
        # foreign-key checks would dominate; only without triggers of the app's own to skip.
        own = "SELECT 1 FROM pg_trigger WHERE NOT tgisinternal AND tgrelid = ANY(%s::regclass[])"
        foreign_keys_checked = True
        if not conn.execute(own, [tables]).fetchone():
            with contextlib.suppress(psycopg.errors.InsufficientPrivilege), conn.transaction():
                conn.execute("SET LOCAL session_replication_role = replica")
                foreign_keys_checked = False
        conn.execute("SET LOCAL work_mem = '256MB'")  # a range's draws, kept in memory
        keys = conn.execute(_KEYS_AND_INDEXES, {"tables": tables}).fetchall()
        for _, drop, _ in reversed(keys):
            conn.execute(drop)
        with tqdm(total=players * len(inserts), desc="INSERT") as bar:
            for first in range(0, players, RANGE):
                last = min(players, first + RANGE) - 1
                conn.execute("SELECT setseed(%s)", [random.Random(seed * RANGE + first).random()])
                for statement, defaults in inserts:
                    conn.execute(statement, {**given, **defaults, "first": first, "last": last})
                    bar.update(last - first + 1)
        inserted = time.perf_counter()
        for _, _, restore in tqdm(keys, desc="keys and indexes"):
            conn.execute(restore)
    copied = time.perf_counter() - started
    with env.connect() as conn:
        conn.execute("ANALYZE matches_player, matches_playersegment, matches_matchresult")
        # Sets the visibility map too, so the PostgreSQL baseline gets index-only scans.
        conn.execute("VACUUM (ANALYZE) matches_playertotal")
        sums = "SELECT count(*), coalesce(sum(points), 0) FROM {} WHERE season_id = %s"
        totals = conn.execute(sums.format("matches_playertotal"), [season.pk]).fetchone()
        results = conn.execute(sums.format("matches_matchresult"), [season.pk]).fetchone()
    return {
        "players": players, "results": results[0], "totals": totals[0],
        "points_sum": int(totals[1]), "match_history": history,
        "totals_equal_results": tuple(totals) == tuple(results) if history else None,
        "foreign_keys_checked_during_copy": foreign_keys_checked, "copy_seconds": round(copied, 2),
        "insert_seconds": round(inserted - started, 2),
        "seconds_with_vacuum_analyze": round(time.perf_counter() - started, 2),
        "rows_per_s": round((3 if history else 2) * players / copied),
        "score_distribution": "points ~ 1 + lognormal(mu=6, sigma=1.5), one result per player"
        " (drawn in PostgreSQL)",
        "method": "INSERT ... SELECT generate_series, one transaction, keys and indexes after",
    }  # fmt: skip


def season_rebuild(*, season: Season, players: int) -> dict[str, Any]:
    """The project's own rebuild from PostgreSQL into Redis, timed: the rebuild figure."""
    started = time.perf_counter()
    with tqdm(total=players, unit="player", desc="rebuild ZSET") as bar:
        size = season_rebuild_standings(season=season, on_progress=bar.update)
    seconds = time.perf_counter() - started
    return {"players": size, "seconds": round(seconds, 3), "players_per_s": round(size / seconds),
            "zcard": store.board_size(season.pk)}  # fmt: skip


def profiles_fill(*, env: BenchEnvironment, players: int) -> dict[str, Any]:
    """Every player's name into the profile directory (`manage.py profiles_backfill`), timed,
    and what it costs Redis (used_memory before and after: nothing else writes meanwhile)."""
    client = redis.Redis.from_url(env.redis_url, socket_timeout=60)
    used = lambda: int(client.info("memory")["used_memory"])  # noqa: E731
    before, started = used(), time.perf_counter()
    walked, filed = profiles_backfill()
    seconds, each = time.perf_counter() - started, (used() - before) / max(filed, 1)
    return {"players": walked, "filed": filed, "seconds": round(seconds, 1),
            "players_per_s": round(walked / seconds), "bytes_per_player": round(each, 1),
            "projected_gib": round(each * PROJECTED_PLAYERS / 2**30, 2)}  # fmt: skip


def _segments_memory(client: redis.Redis, season: Season, size: int) -> dict[str, Any] | None:
    """The season's segment sets (the clans' among them), clan board and players' values (MEMORY
    USAGE, every element): bytes in all, a player and a dimension a player (clans count as one)."""
    dimensions = len(season.board.segment_dimensions)
    if not dimensions or not size:
        return None
    keys, names = store.season_keys(season.pk), store.segment_names(season.pk)
    clans = sum(name.startswith("clan:") for name in names)
    sets = sum(int(client.memory_usage(f"{keys.standings}:{n}", samples=0) or 0) for n in names)
    sets += int(client.memory_usage(f"{keys.standings}:clans", samples=0) or 0)
    values = int(client.memory_usage(keys.segments, samples=0) or 0)
    counted = dimensions + (1 if clans else 0)
    return {
        "dimensions": dimensions, "clans": clans, "segment_sets": len(names), "sets_bytes": sets,
        "values_bytes": values, "bytes_per_player": round((sets + values) / size, 1),
        "bytes_per_player_per_dimension": round((sets + values) / size / counted, 1),
    }  # fmt: skip


def season_memory(*, env: BenchEnvironment, season: Season) -> dict[str, Any]:
    """Redis bytes per player: MEMORY USAGE of the season's key (every element) over ZCARD."""
    key = store.standings_key(season.pk)
    client = redis.Redis.from_url(env.redis_url, socket_timeout=60, decode_responses=True)
    usage = int(client.memory_usage(key, samples=0) or 0)
    size = int(client.zcard(key))
    per_player = usage / size if size else 0.0
    projected = per_player * PROJECTED_PLAYERS
    segments = _segments_memory(client, season, size)
    return {
        **({"segments": segments} if segments else {}), "key": key, "zcard": size,
        "encoding": client.object("encoding", key), "memory_usage_bytes": usage,
        "bytes_per_player": round(per_player, 2), "projected_players": PROJECTED_PLAYERS,
        "projected_bytes": round(projected), "projected_gib": round(projected / 2**30, 2),
        "member_example": "p" + str(size - 1),
    }  # fmt: skip
