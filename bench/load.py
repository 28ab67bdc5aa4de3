"""A season of N players through the real data path: PostgreSQL COPY, then the project's own
rebuild into Redis; and what the resulting sorted set costs in memory.

Scores are skewed like a game's (bench/scores.py), each player with one match result, so every
total equals the sum of its results. Generation is seeded per chunk, so a run with the same seed
and N loads the same season.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import psycopg
import redis
from django.db import connection, models
from django.utils import timezone
from tqdm import tqdm

from leaderboards import store
from leaderboards.services import season_rebuild_standings
from matches.models import GameServer, MatchResult, PendingStanding, Player, PlayerTotal
from seasons.models import Board, Season, SeasonState
from seasons.services import season_create

from .environment import QUEUE, BenchEnvironment
from .errors import BenchError
from .scores import CHUNK, chunk_scores

BOARD = "bench"
PROJECTED_PLAYERS = 100_000_000
# Loaded results end at least this long before the run, so reconciliation's recent pass (last
# ten minutes of results) sees only what the run itself posts.
LOADED_BEFORE = timedelta(hours=1)


def bench_reset(env: BenchEnvironment) -> None:
    """Empty the bench's own tables and keys (a run always starts from a season it loads)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE matches_matchresult, matches_playertotal, matches_pendingstanding,"
            " matches_player, seasons_season,"
            " seasons_board, matches_gameserver RESTART IDENTITY CASCADE"
        )
    store.delete_prefixed_keys()
    redis_cleanup(env)


def season_reused(env: BenchEnvironment, *, players: int) -> Season | None:
    """The season a previous run loaded, when it is the only one, still open, and has `players`
    totals: its outbox and keys are emptied so the rebuild starts level. None: load a new one."""
    seasons = list(Season.objects.select_related("board")[:2])
    if (
        len(seasons) != 1
        or seasons[0].state != SeasonState.OPEN
        or PlayerTotal.objects.filter(season=seasons[0]).count() != players
    ):
        return None
    PendingStanding.objects.all().delete()
    GameServer.objects.all().delete()
    store.delete_prefixed_keys()
    redis_cleanup(env)
    return seasons[0]


def profile_cache_clear(env: BenchEnvironment) -> None:
    """Delete the profile cache (the gateway's profile keys under the bench's key prefix) and
    anything under the bench's Django cache prefix."""
    cache = redis.Redis.from_url(env.redis_url, socket_timeout=10)
    patterns = (f"{env.key_prefix}profile:*", f"{env.key_prefix}profile-generation:*")
    for pattern in (*patterns, f"{env.cache_prefix}:*"):
        batch = list(cache.scan_iter(match=pattern, count=1000))
        for start in range(0, len(batch), 1000):
            cache.unlink(*batch[start : start + 1000])


def redis_cleanup(env: BenchEnvironment) -> None:
    """Delete the profile cache under the bench's cache prefix and the bench broker's queue."""
    profile_cache_clear(env)
    broker = redis.Redis.from_url(env.broker_url, socket_timeout=10)
    # The bench's queues, Celery's unacknowledged set and kombu's bindings: the broker database
    # is the bench's own.
    keys = [QUEUE, "celery", "unacked", "unacked_index", "unacked_mutex"]
    keys += list(broker.scan_iter(match="_kombu.binding*", count=1000))
    broker.unlink(*keys)


def season_prepare(*, now: datetime) -> Season:
    """A season running now: it started 30 days ago and runs for 90 more (< 2^24 seconds)."""
    starts_at = (now - timedelta(days=30)).replace(second=0, microsecond=0)
    board, _ = Board.objects.get_or_create(slug=BOARD, defaults={"name": "Benchmark"})
    season = season_create(
        board=board,
        slug=f"r{now:%Y%m%d%H%M%S}",
        name=f"Benchmark run {now:%Y-%m-%d %H:%M}",
        starts_at=starts_at,
        ends_at=starts_at + timedelta(days=120),
    )
    return Season.objects.select_related("board").get(pk=season.pk)


def game_server_key() -> str:
    _, key = GameServer.objects.create_key(name="bench harness")
    return key


class _Clock:
    """Timestamps as COPY text, built from a per-minute cache: formatting a datetime per row
    would cost more than the rest of the row."""

    def __init__(self, origin: datetime) -> None:
        self.origin = origin
        self.minutes: dict[int, str] = {}

    def at(self, elapsed: int) -> str:
        minute, second = divmod(elapsed, 60)
        prefix = self.minutes.get(minute)
        if prefix is None:
            prefix = (self.origin + timedelta(minutes=minute)).strftime("%Y-%m-%d %H:%M:")
            self.minutes[minute] = prefix
        return f"{prefix}{second:02d}+00"


def _copy_text(value: Any) -> str:
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, timedelta):
        return f"{value.total_seconds()} seconds"
    if isinstance(value, dict | list):
        value = json.dumps(value)
    text = str(value)
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def _copy_columns(model: type[models.Model], given: list[str]) -> tuple[str, str]:
    """The COPY column list: the columns the loader writes, then every other column that has a
    default in the model, as a constant, so a column added to the app later does not break the
    load. Returns the statement and the text every row ends with."""
    columns, constants = list(given), []
    for field in model._meta.concrete_fields:
        if field.column in given or isinstance(field, models.AutoField):
            continue
        if field.has_default():
            value = field.get_default()
        elif getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
            value = timezone.now()
        elif field.null or field.db_default is not models.NOT_PROVIDED:
            continue
        else:
            raise BenchError(
                f"bench/load.py does not know what to write into {model._meta.db_table}."
                f"{field.column} (no default): add it to the loader"
            )
        columns.append(field.column)
        constants.append(_copy_text(value))
    statement = f"COPY {model._meta.db_table} ({', '.join(columns)}) FROM STDIN"
    return statement, "".join(f"\t{c}" for c in constants) + "\n"


def _user_triggers(conn: psycopg.Connection[Any], tables: list[str]) -> list[str]:
    rows = conn.execute(
        "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal AND tgrelid = ANY(%s::regclass[])",
        [tables],
    ).fetchall()
    return [row[0] for row in rows]


def _chunks(players: int) -> Iterator[tuple[int, int]]:
    for start in range(0, players, CHUNK):
        yield start, min(CHUNK, players - start)


def _copy(
    cursor: psycopg.Cursor[Any],
    statement: str,
    rows: Iterator[tuple[int, str]],
    *,
    desc: str,
    total: int,
) -> None:
    with cursor.copy(statement) as copy, tqdm(total=total, unit="row", desc=desc) as bar:
        for count, text in rows:
            copy.write(text)
            bar.update(count)


def season_load(
    *, env: BenchEnvironment, season: Season, players: int, seed: int
) -> dict[str, Any]:
    """COPY N players, one match result each, and their totals (nothing in the mirror's outbox:
    the rebuild that follows puts them all in Redis)."""
    clock = _Clock(season.starts_at)
    now = timezone.now()
    span = max(60, int((now - LOADED_BEFORE - season.starts_at).total_seconds()))
    created = now.strftime("%Y-%m-%d %H:%M:%S+00")
    sid, bid = season.pk, season.board_id

    player_copy, player_end = _copy_columns(
        Player, ["player_id", "display_name", "avatar_url", "created_at", "updated_at"]
    )
    result_copy, result_end = _copy_columns(
        MatchResult,
        ["board_id", "season_id", "match_id", "player_id", "points", "ended_at", "received_at"],
    )
    total_copy, total_end = _copy_columns(
        PlayerTotal,
        ["season_id", "player_id", "points", "reached_at", "updated_at"],
    )

    def player_rows() -> Iterator[tuple[int, str]]:
        for start, count in _chunks(players):
            yield (
                count,
                "".join(
                    f"p{i}\tPlayer {i}\t\t{created}\t{created}{player_end}"
                    for i in range(start, start + count)
                ),
            )

    def result_rows() -> Iterator[tuple[int, str]]:
        for start, count in _chunks(players):
            points, elapsed = chunk_scores(seed, start, count, span)
            lines = []
            for offset in range(count):
                i = start + offset
                ts = clock.at(elapsed[offset])
                # Matches of ten players each.
                lines.append(
                    f"{bid}\t{sid}\tload-{i // 10}\tp{i}\t{points[offset]}\t{ts}\t{ts}{result_end}"
                )
            yield count, "".join(lines)

    def total_rows() -> Iterator[tuple[int, str]]:
        for start, count in _chunks(players):
            points, elapsed = chunk_scores(seed, start, count, span)
            lines = []
            for offset in range(count):
                ts = clock.at(elapsed[offset])
                lines.append(f"{sid}\tp{start + offset}\t{points[offset]}\t{ts}\t{ts}{total_end}")
            yield count, "".join(lines)

    tables = [Player._meta.db_table, MatchResult._meta.db_table, PlayerTotal._meta.db_table]
    started = time.perf_counter()
    with psycopg.connect(**env.conninfo()) as conn:
        # As pg_restore --disable-triggers does: the generated rows are consistent by
        # construction, and per-row foreign-key checks would dominate a load of millions. Only
        # when the tables have no triggers of the app's own, whose work would be skipped too.
        foreign_keys_checked = True
        if not _user_triggers(conn, tables):
            try:
                conn.execute("SET session_replication_role = replica")
                conn.commit()
                foreign_keys_checked = False
            except psycopg.errors.InsufficientPrivilege:
                conn.rollback()
        with conn.cursor() as cursor:
            _copy(cursor, player_copy, player_rows(), desc="COPY players", total=players)
            _copy(cursor, result_copy, result_rows(), desc="COPY results", total=players)
            _copy(cursor, total_copy, total_rows(), desc="COPY totals", total=players)
    copied = time.perf_counter() - started
    with psycopg.connect(**env.conninfo(), autocommit=True) as conn:
        conn.execute("ANALYZE matches_player")
        conn.execute("ANALYZE matches_matchresult")
        # Sets the visibility map too, so the PostgreSQL baseline gets index-only scans.
        conn.execute("VACUUM (ANALYZE) matches_playertotal")
        totals = conn.execute(
            "SELECT count(*), coalesce(sum(points), 0) FROM matches_playertotal"
            " WHERE season_id = %s",
            [sid],
        ).fetchone()
        results = conn.execute(
            "SELECT count(*), coalesce(sum(points), 0) FROM matches_matchresult"
            " WHERE season_id = %s",
            [sid],
        ).fetchone()
    elapsed = time.perf_counter() - started
    return {
        "players": players,
        "results": results[0],
        "totals": totals[0],
        "points_sum": int(totals[1]),
        "totals_equal_results": tuple(totals) == tuple(results),
        "foreign_keys_checked_during_copy": foreign_keys_checked,
        "copy_seconds": round(copied, 2),
        "seconds_with_vacuum_analyze": round(elapsed, 2),
        "rows_per_s": round(3 * players / copied),
        "score_distribution": "points ~ 1 + lognormal(mu=6, sigma=1.5), one result per player",
    }


def season_rebuild(*, season: Season, players: int) -> dict[str, Any]:
    """The project's own rebuild from PostgreSQL into Redis, timed: the rebuild figure."""
    started = time.perf_counter()
    with tqdm(total=players, unit="player", desc="rebuild ZSET") as bar:
        size = season_rebuild_standings(season=season, on_progress=bar.update)
    seconds = time.perf_counter() - started
    return {
        "players": size,
        "seconds": round(seconds, 3),
        "players_per_s": round(size / seconds),
        "zcard": store.board_size(season.pk),
    }


def season_memory(*, env: BenchEnvironment, season: Season) -> dict[str, Any]:
    """Redis bytes per player: MEMORY USAGE of the season's key (every element) over ZCARD."""
    key = store.standings_key(season.pk)
    client = redis.Redis.from_url(env.redis_url, socket_timeout=60, decode_responses=True)
    usage = int(client.memory_usage(key, samples=0) or 0)
    size = int(client.zcard(key))
    per_player = usage / size if size else 0.0
    projected = per_player * PROJECTED_PLAYERS
    return {
        "key": key,
        "zcard": size,
        "encoding": client.object("encoding", key),
        "memory_usage_bytes": usage,
        "bytes_per_player": round(per_player, 2),
        "projected_players": PROJECTED_PLAYERS,
        "projected_bytes": round(projected),
        "projected_gib": round(projected / 2**30, 2),
        "member_example": "p" + str(size - 1),
    }
