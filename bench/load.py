"""A season of N players through the real data path: PostgreSQL COPY (one result a player, seeded
per chunk), then the project's own rebuild into Redis; and what the sorted set costs in memory."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Any

import psycopg
import redis
from django.db import connection, models
from django.utils import timezone
from tqdm import tqdm

from leaderboards import store
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

from .core import BenchError
from .environment import QUEUE, BenchEnvironment, connect
from .scores import CHUNK, chunk_scores
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
            " matches_gameserver RESTART IDENTITY CASCADE"
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
    return {
        "lists": owners,
        "friends_each": len(lists[0].friend_ids) if lists else 0,
        "seconds": round(time.perf_counter() - started, 2),
    }


def profile_cache_clear(env: BenchEnvironment) -> None:
    """Delete the gateway's profile keys and Django's cache under the bench's prefixes."""
    cache = redis.Redis.from_url(env.redis_url, socket_timeout=10)
    prefix = env.key_prefix
    for pattern in (f"{prefix}profile:*", f"{prefix}profile-generation:*", f"{env.cache_prefix}:*"):
        batch = list(cache.scan_iter(match=pattern, count=1000))
        for start in range(0, len(batch), 1000):
            cache.unlink(*batch[start : start + 1000])


def redis_cleanup(env: BenchEnvironment) -> None:
    """The profile cache, and the bench broker's queues, Celery's unacknowledged set and kombu's
    bindings (the broker database is the bench's own)."""
    profile_cache_clear(env)
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
        board=board,
        slug=f"r{now:%Y%m%d%H%M%S}",
        name=f"Benchmark run {now:%Y-%m-%d %H:%M}",
        starts_at=starts_at,
        ends_at=starts_at + timedelta(days=120),
    )
    return Season.objects.select_related("board").get(pk=season.pk)


def game_server_key() -> str:
    return GameServer.objects.create_key(name="bench harness")[1]


def _copy_text(value: Any) -> str:
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, timedelta):
        return f"{value.total_seconds()} seconds"
    text = json.dumps(value) if isinstance(value, dict | list) else str(value)
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def _copy_columns(model: type[models.Model], given: str) -> tuple[str, str]:
    """The COPY statement for the columns given, then every other column with a default, as a
    constant (a column added to the app later does not break the load); and every row's end."""
    columns, constants = given.split(), []
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
        columns.append(field.column)
        constants.append(_copy_text(value))
    statement = f"COPY {model._meta.db_table} ({', '.join(columns)}) FROM STDIN"
    return statement, "".join(f"\t{c}" for c in constants) + "\n"


def season_load(
    *, env: BenchEnvironment, season: Season, players: int, seed: int
) -> dict[str, Any]:
    """COPY N players, one match result each, and their totals (nothing in the mirror's outbox:
    the rebuild that follows puts them all in Redis)."""
    now = timezone.now()
    span = max(60, int((now - LOADED_BEFORE - season.starts_at).total_seconds()))
    created = now.strftime("%Y-%m-%d %H:%M:%S+00")
    sid, bid = season.pk, season.board_id
    minutes: dict[int, str] = {}

    def at(elapsed: int, player: int) -> str:
        """A timestamp as COPY text, from a per-minute cache (a datetime a row costs more), with
        microseconds as the API's results have them (the ZSET keeps whole seconds)."""
        minute, second = divmod(elapsed, 60)
        if minute not in minutes:
            moment = season.starts_at + timedelta(minutes=minute)
            minutes[minute] = moment.strftime("%Y-%m-%d %H:%M:")
        return f"{minutes[minute]}{second:02d}.{player * 7919 % 1_000_000:06d}+00"

    def rows(
        what: str, line: Callable[[int, int, str], str], end: str
    ) -> Iterator[tuple[int, str]]:
        for start in range(0, players, CHUNK):
            count = min(CHUNK, players - start)
            if what == "clans":  # one row for each CLAN_MEMBERS players (CHUNK is a multiple)
                heads = range(start, start + count, CLAN_MEMBERS)
                yield count, "".join(line(i, 0, "") + end for i in heads)
                continue
            if what in ("players", "segments"):  # no points nor time to draw
                yield count, "".join(line(start + i, 0, "") + end for i in range(count))
                continue
            points, elapsed = chunk_scores(seed, start, count, span)
            lines = (
                line(start + i, points[i], at(elapsed[i], start + i)) + end for i in range(count)
            )
            yield count, "".join(lines)

    segmented = bool(season.board.segment_dimensions)
    copies = (  # (what, model, the columns the loader writes, a row of them)
        *((("clans", Clan, "clan_id name",
             lambda i, p, t: f"k{i // CLAN_MEMBERS}\tClan {i // CLAN_MEMBERS}"),)
          if segmented else ()),
        ("players", Player,
         "player_id display_name avatar_url created_at updated_at segments_changes clan_id",
         lambda i, p, t: f"p{i}\tPlayer {i}\t\t{created}\t{created}\t{int(segmented)}\t"
                         + (f"k{i // CLAN_MEMBERS}" if segmented else "\\N")),
        # A player's value in each dimension, spread as bench/segments.py spreads them.
        *((("segments", PlayerSegment, "player_id dimension value",
            lambda i, p, t: f"p{i}\tcountry\tc{i * 7919 % COUNTRIES:02d}\n"
                            f"p{i}\tplatform\tx{i % PLATFORMS}"),) if segmented else ()),
        # Matches of ten players each.
        ("results", MatchResult,
         "board_id season_id match_id player_id points ended_at received_at",
         lambda i, p, t: f"{bid}\t{sid}\tload-{i // 10}\tp{i}\t{p}\t{t}\t{t}"),
        ("totals", PlayerTotal, "season_id player_id points reached_at updated_at",
         lambda i, p, t: f"{sid}\tp{i}\t{p}\t{t}\t{t}"),
    )  # fmt: skip
    tables = [model._meta.db_table for _, model, _, _ in copies]
    started = time.perf_counter()
    with connect(env.database_url) as conn:
        # As pg_restore --disable-triggers: the rows are consistent by construction, and per-row
        # foreign-key checks would dominate; only without triggers of the app's own to skip.
        triggers = conn.execute(
            "SELECT 1 FROM pg_trigger WHERE NOT tgisinternal AND tgrelid = ANY(%s::regclass[])",
            [tables],
        ).fetchall()
        foreign_keys_checked = True
        if not triggers:
            try:
                conn.execute("SET session_replication_role = replica")
                conn.commit()
                foreign_keys_checked = False
            except psycopg.errors.InsufficientPrivilege:
                conn.rollback()
        with conn.cursor() as cursor:
            for what, model, columns, line in copies:
                statement, end = _copy_columns(model, columns)
                with (
                    cursor.copy(statement) as copy,
                    tqdm(total=players, desc=f"COPY {what}") as bar,
                ):
                    for count, text in rows(what, line, end):
                        copy.write(text)
                        bar.update(count)
    copied = time.perf_counter() - started
    with env.connect() as conn:
        conn.execute("ANALYZE matches_player, matches_playersegment, matches_matchresult")
        # Sets the visibility map too, so the PostgreSQL baseline gets index-only scans.
        conn.execute("VACUUM (ANALYZE) matches_playertotal")
        sums = "SELECT count(*), coalesce(sum(points), 0) FROM {} WHERE season_id = %s"
        totals = conn.execute(sums.format("matches_playertotal"), [sid]).fetchone()
        results = conn.execute(sums.format("matches_matchresult"), [sid]).fetchone()
    return {
        "players": players,
        "results": results[0],
        "totals": totals[0],
        "points_sum": int(totals[1]),
        "totals_equal_results": tuple(totals) == tuple(results),
        "foreign_keys_checked_during_copy": foreign_keys_checked,
        "copy_seconds": round(copied, 2),
        "seconds_with_vacuum_analyze": round(time.perf_counter() - started, 2),
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


def _segments_memory(client: redis.Redis, season: Season, size: int) -> dict[str, Any] | None:
    """What the season's segments hold beside its set: every segment set (the clans' member sets
    among them), the clan board and the players' values (MEMORY USAGE, every element), a player
    and a dimension a player (the clans counted as one)."""
    dimensions = len(season.board.segment_dimensions)
    if not dimensions or not size:
        return None
    keys = store.season_keys(season.pk)
    names = store.segment_names(season.pk)
    clans = sum(name.startswith("clan:") for name in names)
    sets = sum(int(client.memory_usage(f"{keys.standings}:{n}", samples=0) or 0) for n in names)
    sets += int(client.memory_usage(f"{keys.standings}:clans", samples=0) or 0)
    values = int(client.memory_usage(keys.segments, samples=0) or 0)
    counted = dimensions + (1 if clans else 0)
    return {
        "dimensions": dimensions,
        "clans": clans,
        "segment_sets": len(names),
        "sets_bytes": sets,
        "values_bytes": values,
        "bytes_per_player": round((sets + values) / size, 1),
        "bytes_per_player_per_dimension": round((sets + values) / size / counted, 1),
    }


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
        **({"segments": segments} if segments else {}),
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
