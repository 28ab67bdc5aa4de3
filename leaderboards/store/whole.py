"""Whole standings: the markers that tell a set built from PostgreSQL from one lost with its Redis
and refilled in part, and StandingsNotWhole for a read that must not answer from the latter."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from config.building_blocks.redis import ScriptCall, commands_run, evalsha

from .database import claimed_identity
from .keys import standings_key, whole_key
from .read_scripts import NOT_WHOLE
from .rows import Commands
from .scripts import MARK_WHOLE
from .writes import acknowledged_run

# Redis cannot tell a season's set lost with its node (restarted empty, then refilled in part by the
# mirror) from a new one: both lack players PostgreSQL ranks. So each set (each shard) has a marker
# beside it, in its slot, which is lost with it: set by the rebuild's swap (a set built from
# PostgreSQL) and, for a season never marked, once at its first mirror write
# (leaderboards/services.py, which records the marking in PostgreSQL first). A read told the season
# was marked once (`whole`, see selectors.standings_whole_required) fails with StandingsNotWhole
# where a marker is missing, so the API answers 503 until the rebuild that the mirror or
# reconciliation starts has put the season back.


class StandingsNotWhole(RedisConnectionError):
    """A season's standings in Redis are not whole (lost with their Redis): no answer from them.
    To every caller it is the store being unavailable, as a Redis down is (503, the 503 page,
    a socket closed with 4503): its Redis is back, but not its standings yet."""


@contextmanager
def whole_or_raise() -> Iterator[None]:
    """A read script's "not whole" reply as StandingsNotWhole."""
    try:
        yield
    except ResponseError as exc:
        if str(exc).startswith(NOT_WHOLE):
            raise StandingsNotWhole(str(exc)) from exc
        raise


def whole_commands(season_id: int, shards: int) -> Commands:
    return [("GET", whole_key(season_id, shards, shard)) for shard in range(shards)]


def readable(markers: Sequence[str | None], whole: bool) -> bool:
    """Whether sets with these markers may be read: none marked by another database and, when
    they must be whole (`whole`), every one marked by this one (read_scripts._LUA_WHOLE's
    rule)."""
    identity = claimed_identity()
    return all(marked == identity or (marked is None and not whole) for marked in markers)


def standings_mark_whole(
    season_id: int, *, shards: int = 1, present: Mapping[int, str] | None = None
) -> bool:
    """Mark the season's sets whole (a season never marked: leaderboards/services.py). `present`
    names, by shard, a player the caller saw in the set: a shard that lost it since is not marked,
    and False is returned. With replicas, they hold the marks before this returns."""
    present = present or {}
    calls = [
        evalsha(
            ScriptCall(
                MARK_WHOLE,
                [standings_key(season_id, shards, shard), whole_key(season_id, shards, shard)],
                [present.get(shard, ""), claimed_identity()],
            )
        )
        for shard in range(shards)
    ]
    return all(int(marked) for marked in acknowledged_run(calls))


def standings_whole(season_id: int, *, shards: int = 1) -> bool:
    """Whether every shard of the season is marked whole by this database."""
    return readable(commands_run(whole_commands(season_id, shards)), True)


def readable_or_raise(season_id: int, shards: int, whole: bool) -> None:
    if not readable(commands_run(whole_commands(season_id, shards)), whole):
        raise StandingsNotWhole(f"season {season_id} has no whole standings in Redis")
