"""Reads of a sharded board: each read a plan of round trips, run by the synchronous driver or the
event loop's, that gives the answer one set would."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Generator, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from config.building_blocks.redis import (
    ScriptCall,
    areplica_commands_run,
    client,
    commands_run,
    evalsha,
    loop_commands_run,
    replica_commands_run,
)
from seasons.scoring import TIME_SLOTS

from .keys import by_shard, shard_of, standings_keys
from .read_scripts import SHARD_AHEAD, SHARD_NEAR
from .rows import (
    BATCH_CHUNK,
    BatchRead,
    Commands,
    RankedRow,
    Row,
    Standing,
    flag,
    pairs,
    with_better,
)
from .whole import StandingsNotWhole, readable, whole_commands

# The same answers as one set gives, over N shards. The order is the set's: the larger composite
# first and, of equal composites, the member that sorts last byte by byte (ZREVRANGE's). So:
# - a player's rank is 1 + the members every shard holds ahead of them (its ZCOUNT of better
#   composites, plus the tied members that sort after them);
# - a page is a merge of each shard's run of members from the place where the ranks before the
#   page end on that shard (a merge of the shards' tops near the top; found by halving deeper);
# - around-me is a merge of the members just ahead and just behind on every shard.
# Each step sends one command to every shard in one round trip (a pipeline, in parallel on a
# cluster); a read takes two or three steps. A plan below is the read's steps, written once and
# run by the synchronous driver or the event loop's. Each shard answers a step at its own moment:
# exact on a board at rest; under writes as current as the moment of each shard's answer.


# Pages whose last rank is at most this are a merge of every shard's top; deeper ones first find
# where they start on each shard.
_MERGED_TOP_REACH = 1000


_T = TypeVar("_T")
Plan = Generator[Commands, list[Any], _T]


def run_plan(plan: Plan[_T], shared: bool) -> _T:
    """Run a read's steps, each a round trip (on a replica that may answer, with `shared`)."""
    run = replica_commands_run if shared else commands_run
    try:
        commands = next(plan)
        while True:
            commands = plan.send(run(commands))
    except StopIteration as done:
        return done.value


async def arun_plan(plan: Plan[_T], shared: bool) -> _T:
    """run_plan from the event loop: each step's commands leave with the others of its turn."""
    try:
        commands = next(plan)
        while True:
            send = areplica_commands_run if shared else loop_commands_run
            replies = await send(commands)
            commands = plan.send(replies)
    except StopIteration as done:
        return done.value


def whole_checked(plan: Plan[_T], season_id: int, shards: int, whole: bool) -> Plan[_T]:
    """A sharded read's plan whose first round trip also asks for every shard's marker, and
    which raises StandingsNotWhole where a shard may not be read (readable)."""
    markers = whole_commands(season_id, shards)
    replies = yield [*next(plan), *markers]
    if not readable(replies[-shards:], whole):
        raise StandingsNotWhole(f"season {season_id}: a shard has no whole standings in Redis")
    replies = replies[:-shards]
    try:
        while True:
            replies = yield plan.send(replies)
    except StopIteration as done:
        return done.value


def _order(row: Row) -> tuple[int, str]:
    # Python orders str by code point, which is UTF-8's byte order: the set's order of ties.
    return row[1], row[0]


def _merged(runs: Iterable[list[Row]]) -> Iterator[Row]:
    """Rows of several shards' runs (each best first), best first."""
    return heapq.merge(*runs, key=_order, reverse=True)


def _ahead_command(key: str, rows: Sequence[Row], competition: bool) -> tuple[Any, ...]:
    args: list[Any] = [flag(competition)]
    for player_id, composite in rows:
        args += [composite, player_id]
    return evalsha(ScriptCall(SHARD_AHEAD, [key], args))


def _points_floor(composite: int) -> int:
    return (composite // TIME_SLOTS + 1) * TIME_SLOTS


def _better_plan(keys: Sequence[str], composite: int) -> Plan[int]:
    """Members of every shard with better points than `composite` (a competition rank's base)."""
    counts = yield [("ZCOUNT", key, _points_floor(composite), "+inf") for key in keys]
    return sum(int(count) for count in counts)


def _sizes_commands(keys: Sequence[str]) -> Commands:
    return [("ZCARD", key) for key in keys]


def rank_plan(
    season_id: int, shards: int, player_id: str, competition: bool, *, segment: str | None = None
) -> Plan[tuple[int, Standing | None]]:
    keys = standings_keys(season_id, shards, segment)
    own = keys[shard_of(player_id, shards)]
    replies = yield [("ZSCORE", own, player_id), *_sizes_commands(keys)]
    size = sum(int(count) for count in replies[1:])
    if replies[0] is None:
        return size, None
    composite = int(float(replies[0]))
    counts = yield [_ahead_command(key, [(player_id, composite)], competition) for key in keys]
    ahead = sum(int(reply[0]) for reply in counts)
    better = sum(int(reply[1]) for reply in counts) if competition else None
    return size, Standing(player_id, ahead + 1, composite, better)


def _standings_from(
    rows: Sequence[Row], first_rank: int, first_better: int | None
) -> list[Standing]:
    return with_better(
        [(player_id, first_rank + i, composite) for i, (player_id, composite) in enumerate(rows)],
        first_better,
    )


def page_plan(
    season_id: int,
    shards: int,
    offset: int,
    limit: int,
    competition: bool,
    *,
    segment: str | None = None,
) -> Plan[tuple[int, list[Standing]]]:
    keys = standings_keys(season_id, shards, segment)
    if offset + limit <= _MERGED_TOP_REACH:
        last = offset + limit - 1
        replies = yield [
            *_sizes_commands(keys),
            *(("ZREVRANGE", key, 0, last, "WITHSCORES") for key in keys),
        ]
        size = sum(int(count) for count in replies[:shards])
        merged = list(itertools.islice(_merged(map(pairs, replies[shards:])), last + 1))
        rows = merged[offset:]
        if not rows:
            return size, []
        # Every member with better points than the page's first row ranks before it, so among
        # the merged rows already.
        floor = _points_floor(rows[0][1])
        better = sum(1 for _, composite in merged[:offset] if composite >= floor)
        return size, _standings_from(rows, offset + 1, better if competition else None)
    sizes = [int(count) for count in (yield _sizes_commands(keys))]
    if offset >= sum(sizes):
        return sum(sizes), []
    starts = yield from _starts_plan(keys, sizes, offset)
    replies = yield [
        ("ZREVRANGE", key, start, start + limit - 1, "WITHSCORES")
        for key, start in zip(keys, starts, strict=True)
    ]
    rows = list(itertools.islice(_merged(map(pairs, replies)), limit))
    if not rows:
        return sum(sizes), []
    better = (yield from _better_plan(keys, rows[0][1])) if competition else None
    return sum(sizes), _standings_from(rows, offset + 1, better)


def _starts_plan(keys: Sequence[str], sizes: Sequence[int], offset: int) -> Plan[list[int]]:
    """How many of the board's first `offset` members each shard holds, by halving: each round
    takes the middle member of every shard's open range, counts what is ahead of it on every
    shard, and so learns on which side of the offset it and the members ahead of it lie. About
    log2(shard size) rounds of two round trips."""
    total = sum(sizes)
    low = [max(0, offset - (total - size)) for size in sizes]
    high = [min(size, offset) for size in sizes]
    while True:
        open_shards = [i for i in range(len(keys)) if low[i] < high[i]]
        if not open_shards:
            return low
        middles = {i: (low[i] + high[i]) // 2 for i in open_shards}
        replies = yield [
            ("ZREVRANGE", keys[i], middles[i], middles[i], "WITHSCORES") for i in open_shards
        ]
        pivots: list[tuple[int, Row]] = []
        for i, reply in zip(open_shards, replies, strict=True):
            found = pairs(reply)
            if found:
                pivots.append((i, found[0]))
            else:  # the shard shrank since its size was read: nothing of it from here on
                high[i] = middles[i]
        if not pivots:
            continue
        counts = yield [_ahead_command(key, [row for _, row in pivots], False) for key in keys]
        for j, (i, _) in enumerate(pivots):
            ahead = [int(reply[2 * j]) for reply in counts]
            ahead[i] = middles[i]
            if sum(ahead) < offset:  # the pivot is among the first `offset`, and all ahead of it
                low = [max(lo, a) for lo, a in zip(low, ahead, strict=True)]
                low[i] = max(low[i], middles[i] + 1)
            else:  # the pivot and everything behind it on each shard come after the offset
                high = [min(hi, a) for hi, a in zip(high, ahead, strict=True)]
            # Under writes the bounds may cross: the range closes where it is.
            low = [min(lo, hi) for lo, hi in zip(low, high, strict=True)]


def around_plan(
    season_id: int,
    shards: int,
    player_id: str,
    n: int,
    competition: bool,
    *,
    segment: str | None = None,
) -> Plan[tuple[int, Standing | None, list[Standing]]]:
    keys = standings_keys(season_id, shards, segment)
    own = keys[shard_of(player_id, shards)]
    replies = yield [("ZSCORE", own, player_id), *_sizes_commands(keys)]
    size = sum(int(count) for count in replies[1:])
    if replies[0] is None:
        return size, None, []
    composite = int(float(replies[0]))
    near = yield [evalsha(ScriptCall(SHARD_NEAR, [key], [composite, player_id, n])) for key in keys]
    rank = 1 + sum(int(reply[0]) for reply in near)
    before = list(_merged(pairs(reply[1]) for reply in near))[-n:] if n else []
    behind = (row for row in _merged(pairs(reply[2]) for reply in near) if row[0] != player_id)
    rows = [*before, (player_id, composite), *itertools.islice(behind, n)]
    better = (yield from _better_plan(keys, rows[0][1])) if competition else None
    standings = _standings_from(rows, rank - len(before), better)
    return size, standings[len(before)], standings


def many_plan(
    season_id: int,
    shards: int,
    player_ids: Sequence[str],
    competition: bool,
    *,
    segment: str | None = None,
) -> Plan[tuple[int, list[Standing | None]]]:
    keys = standings_keys(season_id, shards, segment)
    groups = by_shard(player_ids, shards)
    replies = yield [
        *_sizes_commands(keys),
        *(("ZMSCORE", keys[shard], *ids) for shard, ids in groups.items()),
    ]
    size = sum(int(count) for count in replies[:shards])
    scores: dict[str, Any] = {}
    for ids, found in zip(groups.values(), replies[shards:], strict=True):
        scores.update(zip(ids, found, strict=True))
    ranked = [
        (p, int(float(scores[p]))) for p in dict.fromkeys(player_ids) if scores[p] is not None
    ]
    chunks = [ranked[i : i + BATCH_CHUNK] for i in range(0, len(ranked), BATCH_CHUNK)]
    counts = yield [_ahead_command(key, chunk, competition) for chunk in chunks for key in keys]
    ahead = dict.fromkeys((p for p, _ in ranked), 0)
    better = dict.fromkeys((p for p, _ in ranked), 0)
    replies_left = iter(counts)
    for chunk in chunks:
        for _ in keys:
            flat = next(replies_left)
            for k, (player_id, _) in enumerate(chunk):
                ahead[player_id] += int(flat[2 * k])
                better[player_id] += int(flat[2 * k + 1])
    found = {
        p: Standing(p, ahead[p] + 1, composite, better[p] if competition else None)
        for p, composite in ranked
    }
    return size, [found.get(p) for p in player_ids]


def batch_plan(
    season_id: int,
    shards: int,
    top: int,
    player_ids: Sequence[str],
    arounds: Sequence[tuple[str, int]],
    *,
    segment: str | None = None,
) -> Plan[BatchRead]:
    size, page = (
        (yield from page_plan(season_id, shards, 0, top, False, segment=segment))
        if top > 0
        else (0, [])
    )
    many_size, many = yield from many_plan(season_id, shards, player_ids, False, segment=segment)
    windows = []
    for player_id, n in arounds:
        _, _, window = yield from around_plan(
            season_id, shards, player_id, n, False, segment=segment
        )
        windows.append(window)
    return BatchRead(
        size=max(size, many_size),
        top=page,
        players=[None if s is None else (s.rank, s.composite) for s in many],
        arounds=windows,
    )


def iter_ranked(
    season_id: int, shards: int, page_size: int, *, segment: str | None = None
) -> Iterator[list[RankedRow]]:
    """The whole board by rank, in pages of (rank, competition rank, player_id, composite) rows
    (the close's snapshot, which writes each of up to 100 million rows once and so makes no
    object of them): each shard read in turn from its top and merged; a row's competition rank
    is the rank where its points began."""

    def shard_rows(key: str) -> Iterator[Row]:
        start = 0
        while True:
            rows = pairs(client().zrevrange(key, start, start + page_size - 1, withscores=True))
            yield from rows
            if len(rows) < page_size:
                return
            start += page_size

    page: list[RankedRow] = []
    points_began = 1
    previous_points: int | None = None
    keys = standings_keys(season_id, shards, segment)
    rows = shard_rows(keys[0]) if len(keys) == 1 else _merged(map(shard_rows, keys))
    for rank, (player_id, composite) in enumerate(rows, start=1):
        points = composite // TIME_SLOTS
        if points != previous_points:
            points_began, previous_points = rank, points
        page.append((rank, points_began, player_id, composite))
        if len(page) == page_size:
            yield page
            page = []
    if page:
        yield page


def iter_sharded(
    season_id: int, shards: int, page_size: int, *, segment: str | None = None
) -> Iterator[list[Standing]]:
    """The whole board by rank (iter_ranked's pages, as standings)."""
    for page in iter_ranked(season_id, shards, page_size, segment=segment):
        yield [
            Standing(player_id, rank, composite, began - 1)
            for rank, began, player_id, composite in page
        ]
