"""The standings' reads (ranks, pages, around-me, batches, sizes, scores, bans), synchronous and
from the event loop: a one-set script call (single.py) or, on a sharded board, a plan
(sharded.py)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from config.building_blocks.redis import (
    client,
    commands_run,
    evalsha,
    loop_send,
    replica_commands_run,
    script_run,
)

from .keys import (
    banned_key,
    by_shard,
    player_banned_key,
    season_keys,
    standings_key,
    standings_keys,
)
from .read_scripts import READ_AROUND, READ_MANY, READ_PAGE, READ_RANKS
from .rows import (
    BATCH_CHUNK,
    BatchRead,
    RankedRow,
    Standing,
    flag,
    flat_rows,
    int_or_none,
    with_better,
)
from .sharded import (
    around_plan,
    arun_plan,
    batch_plan,
    iter_ranked,
    iter_sharded,
    many_plan,
    page_plan,
    rank_plan,
    run_plan,
    whole_checked,
)
from .single import (
    aread_script,
    around_call,
    around_reply,
    page_call,
    page_reply,
    rank_call,
    rank_reply,
    read_call,
    read_script,
)
from .whole import readable_or_raise, whole_or_raise


def read_page(
    season_id: int,
    *,
    offset: int,
    limit: int,
    competition: bool = True,
    shared: bool = False,
    shards: int = 1,
    whole: bool = False,
    segment: str | None = None,
) -> tuple[int, list[Standing]]:
    """Ranks offset+1 .. offset+limit, best first, and the board's size. With `whole`, raises
    StandingsNotWhole where the season's standings are not marked whole (the same below)."""
    if shards > 1:
        plan = page_plan(season_id, shards, offset, limit, competition, segment=segment)
        return run_plan(whole_checked(plan, season_id, shards, whole), shared)
    call = page_call(season_id, offset, limit, competition, whole, segment)
    return page_reply(offset, read_script(call, shared))


def read_rank(
    season_id: int,
    player_id: str,
    *,
    competition: bool = True,
    shared: bool = False,
    shards: int = 1,
    whole: bool = False,
    segment: str | None = None,
) -> tuple[int, Standing | None]:
    if shards > 1:
        plan = rank_plan(season_id, shards, player_id, competition, segment=segment)
        return run_plan(whole_checked(plan, season_id, shards, whole), shared)
    call = rank_call(season_id, player_id, competition, whole, segment)
    return rank_reply(player_id, read_script(call, shared))


def read_around(
    season_id: int,
    player_id: str,
    *,
    n: int,
    competition: bool = True,
    shared: bool = False,
    shards: int = 1,
    whole: bool = False,
    segment: str | None = None,
) -> tuple[int, Standing | None, list[Standing]]:
    if shards > 1:
        plan = around_plan(season_id, shards, player_id, n, competition, segment=segment)
        return run_plan(whole_checked(plan, season_id, shards, whole), shared)
    call = around_call(season_id, player_id, n, competition, whole, segment)
    return around_reply(player_id, read_script(call, shared))


def read_many(
    season_id: int,
    player_ids: Sequence[str],
    *,
    competition: bool = True,
    shards: int = 1,
    whole: bool = False,
    segment: str | None = None,
) -> tuple[int, list[Standing | None]]:
    if shards > 1:
        plan = many_plan(season_id, shards, player_ids, competition, segment=segment)
        return run_plan(whole_checked(plan, season_id, shards, whole), False)
    if not player_ids:
        readable_or_raise(season_id, 1, whole)
        return board_size(season_id, segment=segment), []
    with whole_or_raise():
        size, rows = script_run(
            read_call(READ_MANY, season_id, whole, [flag(competition), *player_ids], segment)
        )
    out: list[Standing | None] = []
    for player_id, (rank, score, better) in zip(player_ids, rows, strict=True):
        if rank is None:
            out.append(None)
        else:
            out.append(Standing(player_id, int(rank) + 1, int(float(score)), int_or_none(better)))
    return int(size), out


def read_batch(
    season_id: int,
    *,
    top: int,
    player_ids: Sequence[str] = (),
    arounds: Sequence[tuple[str, int]] = (),
    shared: bool = False,
    shards: int = 1,
    whole: bool = False,
    segment: str | None = None,
) -> BatchRead:
    """The top, many players' ordinal ranks and several around-me windows of one season, in one
    round trip (the live ticker's read). Each part is read atomically; the parts may be a few
    commands apart, which a reader that looks again on the next change tolerates. (A sharded
    board's parts are read one after the other, each in its few steps.)"""
    if shards > 1:
        plan = batch_plan(season_id, shards, top, player_ids, arounds, segment=segment)
        return run_plan(whole_checked(plan, season_id, shards, whole), shared)
    key = standings_key(season_id, segment=segment)
    calls = []
    if top > 0:
        calls.append(read_call(READ_PAGE, season_id, whole, [0, top - 1, flag(False)], segment))
    chunks = [player_ids[i : i + BATCH_CHUNK] for i in range(0, len(player_ids), BATCH_CHUNK)]
    calls += [read_call(READ_RANKS, season_id, whole, list(chunk), segment) for chunk in chunks]
    calls += [
        read_call(READ_AROUND, season_id, whole, [player_id, n, flag(False)], segment)
        for player_id, n in arounds
    ]
    commands = [*map(evalsha, calls), ("ZCARD", key)]
    with whole_or_raise():
        replies = iter(replica_commands_run(commands) if shared else commands_run(commands))

    page: list[Standing] = []
    if top > 0:
        _, _, flat = next(replies)
        page = with_better(flat_rows(flat, 1), None)
    players: list[tuple[int, int] | None] = []
    for _ in chunks:
        flat = next(replies)
        ranks, scores = flat[0::2], flat[1::2]
        players.extend(
            None if rank < 0 else (rank + 1, int(float(score)))
            for rank, score in zip(ranks, scores, strict=True)
        )
    windows: list[list[Standing]] = []
    for _ in arounds:
        rank, _, first, _, flat = next(replies)
        windows.append([] if rank is None else with_better(flat_rows(flat, int(first) + 1), None))
    return BatchRead(size=int(next(replies)), top=page, players=players, arounds=windows)


def iter_standings(
    season_id: int,
    *,
    page_size: int = 1000,
    shards: int = 1,
    whole: bool = False,
    segment: str | None = None,
) -> Iterable[list[Standing]]:
    """Walk the whole board (or a segment of it) by rank in pages (for archiving and checks)."""
    readable_or_raise(season_id, shards, whole)
    if shards > 1:
        yield from iter_sharded(season_id, shards, page_size, segment=segment)
        return
    offset = 0
    while True:
        _, page = read_page(season_id, offset=offset, limit=page_size, segment=segment)
        if not page:
            return
        yield page
        offset += len(page)


def iter_ranked_rows(
    season_id: int, *, page_size: int = 1000, shards: int = 1, whole: bool = False
) -> Iterable[list[RankedRow]]:
    """The whole board by rank in pages of plain rows (sharded.iter_ranked): the close's
    snapshot."""
    readable_or_raise(season_id, shards, whole)
    yield from iter_ranked(season_id, shards, page_size)


def board_size(season_id: int, *, shards: int = 1, segment: str | None = None) -> int:
    """Players on the board (or in a segment of it): the sum of the shards' sizes."""
    keys = standings_keys(season_id, shards, segment)
    return sum(int(size) for size in commands_run([("ZCARD", key) for key in keys]))


def segment_names(season_id: int, *, shards: int = 1) -> list[str]:
    """The segments ("dimension:value") the season's sets hold players in, every shard's."""
    replies = commands_run(
        [
            ("SMEMBERS", season_keys(season_id, shards, shard).segment_names)
            for shard in range(shards)
        ]
    )
    return sorted({name for names in replies for name in names})


def standings_exist(season_id: int, *, shards: int = 1) -> bool:
    """Whether Redis holds the season's standings (any shard of them)."""
    keys = standings_keys(season_id, shards)
    return any(int(found) for found in commands_run([("EXISTS", key) for key in keys]))


def scores_of(
    season_id: int, player_ids: Sequence[str], *, shards: int = 1, segment: str | None = None
) -> list[int | None]:
    if not player_ids:
        return []
    groups = by_shard(player_ids, shards)
    commands = [
        ("ZMSCORE", standings_key(season_id, shards, i, segment), *ids) for i, ids in groups.items()
    ]
    found: dict[str, Any] = {}
    for ids, scores in zip(groups.values(), commands_run(commands), strict=True):
        found.update(zip(ids, scores, strict=True))
    return [None if found[p] is None else int(float(found[p])) for p in player_ids]


def season_banned_players(season_id: int, *, shards: int = 1) -> set[str]:
    """The players the season's boards (every shard's) hold off as banned: a few, so one
    SMEMBERS a shard."""
    replies = commands_run(
        [("SMEMBERS", banned_key(season_id, shards, shard)) for shard in range(shards)]
    )
    return {player_id for members in replies for player_id in members}


def player_banned_in(season_id: int, player_id: str, *, shards: int = 1) -> bool:
    """Whether the season's board holds the player off as banned (asked when they have no rank)."""
    return bool(client().sismember(player_banned_key(season_id, shards, player_id), player_id))


# --- Reads from an event loop -----------------------------------------------------------------
# The hottest public reads (leaderboards/fast_reads.py): the same calls and replies as above, sent
# with the other commands of the same turn of the loop (config/building_blocks/redis.py's
# loop_send).


async def aplayer_banned_in(season_id: int, player_id: str, *, shards: int = 1) -> bool:
    """player_banned_in from the event loop."""
    key = player_banned_key(season_id, shards, player_id)
    return bool(await loop_send("SISMEMBER", key, player_id))


async def aread_rank(
    season_id: int,
    player_id: str,
    *,
    competition: bool = True,
    shared: bool = False,
    shards: int = 1,
    whole: bool = False,
    segment: str | None = None,
) -> tuple[int, Standing | None]:
    """read_rank from the event loop."""
    if shards > 1:
        plan = rank_plan(season_id, shards, player_id, competition, segment=segment)
        return await arun_plan(whole_checked(plan, season_id, shards, whole), shared)
    call = rank_call(season_id, player_id, competition, whole, segment)
    return rank_reply(player_id, await aread_script(call, shared))


async def aread_around(
    season_id: int,
    player_id: str,
    *,
    n: int,
    competition: bool = True,
    shared: bool = False,
    shards: int = 1,
    whole: bool = False,
    segment: str | None = None,
) -> tuple[int, Standing | None, list[Standing]]:
    """read_around from the event loop."""
    if shards > 1:
        plan = around_plan(season_id, shards, player_id, n, competition, segment=segment)
        return await arun_plan(whole_checked(plan, season_id, shards, whole), shared)
    call = around_call(season_id, player_id, n, competition, whole, segment)
    return around_reply(player_id, await aread_script(call, shared))
