"""Reads of one sorted set (a board of one shard) as script calls and the parses of their replies,
written once so the synchronous reads and the event loop's send the same commands."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from config.building_blocks.redis import (
    ScriptCall,
    areplica_script_run,
    loop_script_run,
    replica_script_run,
    script_run,
)

from .database import claimed_identity
from .keys import standings_key, whole_key
from .read_scripts import READ_AROUND, READ_PAGE, READ_RANK
from .rows import Standing, flag, flat_rows, int_or_none, with_better
from .whole import whole_or_raise


def read_call(
    source: str, season_id: int, whole: bool, args: Sequence[Any], segment: str | None = None
) -> ScriptCall:
    """A single-set read script's call: the set (or its segment's) and its marker, this
    database's identity and whether the set must be whole (read_scripts._LUA_WHOLE), then the
    script's own arguments."""
    return ScriptCall(
        source,
        [standings_key(season_id, segment=segment), whole_key(season_id)],
        [claimed_identity(), flag(whole), *args],
    )


# Each read is a script call and a parse of its reply. The calls are written once, as
# (script, keys, args), so the synchronous reads here and the event loop's reads below send
# exactly the same commands and read their replies with the same code (reads.py).
def page_call(
    season_id: int,
    offset: int,
    limit: int,
    competition: bool,
    whole: bool,
    segment: str | None = None,
) -> ScriptCall:
    args = [offset, offset + limit - 1, flag(competition)]
    return read_call(READ_PAGE, season_id, whole, args, segment)


def page_reply(offset: int, reply: list[Any]) -> tuple[int, list[Standing]]:
    size, first_better, flat = reply
    return int(size), with_better(
        flat_rows(flat, offset + 1), int_or_none(first_better) if flat else None
    )


def rank_call(
    season_id: int, player_id: str, competition: bool, whole: bool, segment: str | None = None
) -> ScriptCall:
    return read_call(READ_RANK, season_id, whole, [player_id, flag(competition)], segment)


def rank_reply(player_id: str, reply: list[Any]) -> tuple[int, Standing | None]:
    rank, score, size, better = reply
    if rank is None:
        return int(size), None
    return int(size), Standing(player_id, int(rank) + 1, int(float(score)), int_or_none(better))


def around_call(
    season_id: int,
    player_id: str,
    n: int,
    competition: bool,
    whole: bool,
    segment: str | None = None,
) -> ScriptCall:
    args = [player_id, n, flag(competition)]
    return read_call(READ_AROUND, season_id, whole, args, segment)


def around_reply(player_id: str, reply: list[Any]) -> tuple[int, Standing | None, list[Standing]]:
    rank, size, first, first_better, flat = reply
    if rank is None:
        return int(size), None, []
    standings = with_better(flat_rows(flat, int(first) + 1), int_or_none(first_better))
    me = next(s for s in standings if s.player_id == player_id)
    return int(size), me, standings


# A read with `shared` may be answered by a replica of the primary (config/building_blocks/redis.py
# says which
# and when); the others, and every read of the closing, reconciliation and checks, by the primary.
def read_script(call: ScriptCall, shared: bool) -> Any:
    with whole_or_raise():
        return replica_script_run(call) if shared else script_run(call)


async def aread_script(call: ScriptCall, shared: bool) -> Any:
    with whole_or_raise():
        return await (areplica_script_run(call) if shared else loop_script_run(call))
