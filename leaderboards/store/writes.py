"""Every write of a season's standings: the mirror's, corrections, bans, the repairs'
compare-and-set, the rebuild (and the heartbeat that keeps its keys alive) and the deletion."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from redis.exceptions import RedisError

from config.building_blocks.redis import (
    ScriptCall,
    client,
    commands_run,
    evalsha,
    replicas_acknowledge,
    script,
    scripts_run,
)

from .database import claimed_identity
from .keys import (
    ShardKeys,
    banned_key,
    by_shard,
    checked_through_keys,
    player_keys,
    season_key,
    season_keys,
    shard_of,
    standings_key,
)
from .rows import Commands
from .scripts import BAN, BUILD, COMPARE_AND_SET, CORRECT, DROP, MIRROR, SWAP

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class StandingWrite:
    season_id: int
    player_id: str
    composite: int
    # Sum totals on lowest-first boards only get worse as results arrive; every other
    # combination only gets better. The write may move the score in that direction only,
    # which makes the mirror indifferent to redelivery and order.
    worsening: bool = False
    shards: int = 1  # the season's
    # Where the standing stands among corrections: its outbox row's id, or a value of that
    # sequence taken before PostgreSQL was read (leaderboards/services.py). A write stamped
    # below the player's last correction is older than it and skipped (see scripts.CORRECT); one
    # without a stamp (tests, benchmarks) is skipped for a player ever corrected.
    stamp: int | None = None
    # The player's segment values (and clan) on the season's board, stamped
    # ("<stamp>|country:DE"), "" for none, or UNREAD when the caller did not read them: Redis
    # keeps the ones it holds, and says which players hold none (Mirrored.unplaced).
    segments: str = ""


# A standing a write moved: (player id, composite before or None, composite after).
Move = tuple[str, int | None, int]


@dataclass(frozen=True, slots=True)
class Crossing:
    """A player who entered (or left) the top `top` with a mirror write: theirs, or another's
    that pushed them out or pulled them in; `rank` is theirs just after."""

    player_id: str
    top: int
    entered: bool
    rank: int


@dataclass(frozen=True, slots=True)
class NotWhole:
    """A season the mirror wrote whose sets (some shard's, at least) are not marked whole: new,
    or lost with its Redis (the caller tells which: leaderboards/services.py)."""

    shards: int
    # A player written into each such shard, to mark it whole by (standings_mark_whole).
    written: dict[int, str]


# A StandingWrite's segments not read from PostgreSQL (see scripts.MIRROR).
UNREAD = "?"


@dataclass(frozen=True, slots=True)
class Mirrored:
    written: int
    not_whole: dict[int, NotWhole]  # by season id
    # Players written with UNREAD segments whose set holds none, by season id.
    unplaced: dict[int, list[str]]
    # The standings the writes moved, by season id, in the order written: each player with
    # their composite before (None: they had none) and after.
    moves: dict[int, list[Move]] = field(default_factory=dict)
    # The top-N thresholds the writes made players cross, by season id, in order.
    crossings: dict[int, list[Crossing]] = field(default_factory=dict)


def mirror_standings(
    writes: Iterable[StandingWrite], thresholds: Mapping[int, Sequence[int]] | None = None
) -> Mirrored:
    """Mirror standings with ZADD GT (or LT): never moves a score back, so replays and tasks
    arriving out of order are harmless. Banned players are skipped, and so are writes older
    than the player's correction (by stamp); while a rebuild is building the season's next set,
    the write goes to that set too (see rebuild_standings). One script call per season, all in
    one round trip. `thresholds` (by season id) are the top-N edges whose crossings to report,
    on seasons of one set: a sharded season's ranks are no one shard's to tell."""
    groups: dict[tuple[int, int, int, bool], list[str]] = {}
    for write in writes:
        shard = shard_of(write.player_id, write.shards)
        groups.setdefault((write.season_id, write.shards, shard, write.worsening), []).extend(
            (
                write.player_id,
                str(write.composite),
                "" if write.stamp is None else str(write.stamp),
                write.segments,
            )
        )
    if not groups:
        return Mirrored(0, {}, {})
    commands = [
        evalsha(
            ScriptCall(
                MIRROR,
                list(season_keys(season_id, shards, shard)),
                [
                    "LT" if worsening else "GT",
                    ",".join(map(str, sorted((thresholds or {}).get(season_id, ()))))
                    if shards == 1
                    else "",
                    *members,
                ],
            )
        )
        for (season_id, shards, shard, worsening), members in groups.items()
    ]
    replies = acknowledged_run(commands)
    identity = claimed_identity()
    written = 0
    not_whole: dict[int, NotWhole] = {}
    unplaced: dict[int, list[str]] = {}
    moves: dict[int, list[Move]] = {}
    crossings: dict[int, list[Crossing]] = {}
    for (season_id, shards, shard, _), reply in zip(groups, replies, strict=True):
        written += int(reply[0])
        if reply[1] != identity:
            found = not_whole.setdefault(season_id, NotWhole(shards, {}))
            if reply[2]:
                found.written[shard] = reply[2]
        if reply[3]:
            unplaced.setdefault(season_id, []).extend(reply[3])
        if reply[4]:
            moved = reply[4]
            moves.setdefault(season_id, []).extend(
                (moved[i], int(float(moved[i + 1])) if moved[i + 1] else None, int(moved[i + 2]))
                for i in range(0, len(moved), 3)
            )
        if reply[5]:
            crossed = reply[5]
            crossings.setdefault(season_id, []).extend(
                Crossing(crossed[i], int(crossed[i + 1]), crossed[i + 2] == 1, int(crossed[i + 3]))
                for i in range(0, len(crossed), 4)
            )
    return Mirrored(written, not_whole, unplaced, moves, crossings)


def acknowledged_run(commands: Commands) -> list[Any]:
    """Writes in one round trip. With replicas, the writes' own connection waits for them to
    hold the writes (bounded), so a reader told of the change afterwards finds it on a replica
    too."""
    acknowledge = replicas_acknowledge()
    if acknowledge is None:
        return commands_run(commands)
    return commands_run([*commands, acknowledge])[:-1]


def write_standings(writes: Iterable[StandingWrite]) -> int:
    """mirror_standings, for callers that need only how many standings were written."""
    return mirror_standings(writes).written


def standing_correct(
    season_id: int,
    player_id: str,
    composite: int | None,
    *,
    stamp: int,
    shards: int = 1,
    segments: str = "",
) -> bool:
    """Set a player's score to exactly `composite` (None: off the board), even when that is
    worse than the one stored: the mirror's writes only move a score one way, and a voided
    result moves it the other. From now on the player's writes stamped below `stamp` are
    skipped (see scripts.CORRECT). Returns False for a banned player (left off) and for a correction
    older than the last one made."""
    done = script(CORRECT)(
        keys=list(player_keys(season_id, shards, player_id)),
        args=[player_id, "" if composite is None else str(composite), str(stamp), segments],
    )
    return bool(done)


def players_ban(seasons: Mapping[int, int], player_id: str) -> None:
    """Take a banned player off these seasons' boards (season id -> its shards) and keep later
    mirror writes off too."""
    scripts_run(
        [
            ScriptCall(BAN, list(player_keys(season_id, shards, player_id)), [player_id])
            for season_id, shards in seasons.items()
        ]
    )


def players_unban(seasons: Mapping[int, int], player_id: str) -> None:
    """Let mirror writes for the player through again (the caller writes their standings)."""
    commands_run(
        [
            ("SREM", banned_key(season_id, shards, shard_of(player_id, shards)), player_id)
            for season_id, shards in seasons.items()
        ]
    )


def compare_and_set(
    season_id: int,
    player_id: str,
    *,
    expected: int | None,
    composite: int | None,
    shards: int = 1,
    segments: str = "",
) -> bool:
    """Set (or remove, with None) a member's score if it still equals `expected`; its segment
    sets follow, moved by `segments` when that entry is newer than the one held."""
    done = script(COMPARE_AND_SET)(
        keys=list(player_keys(season_id, shards, player_id)),
        args=[
            player_id,
            "" if expected is None else str(expected),
            "" if composite is None else str(composite),
            segments,
        ],
    )
    return bool(done)


def remove_players(season_id: int, player_ids: Sequence[str], *, shards: int = 1) -> int:
    """Take members off the board as if Redis had lost them (tests and drills of repairs)."""
    if not player_ids:
        return 0
    groups = by_shard(player_ids, shards)
    commands = [("ZREM", standings_key(season_id, shards, i), *ids) for i, ids in groups.items()]
    return sum(int(removed) for removed in commands_run(commands))


def _build_chunk(
    chunk: Sequence[Sequence[Any]], shards: int, segmented: bool
) -> dict[int, list[Any]]:
    """A snapshot chunk's arguments for BUILD, by shard: score, member, entry triples with
    segments; otherwise the pairs packed into one text (see scripts.BUILD)."""
    if segmented:
        parts: dict[int, list[Any]] = {}
        for player_id, composite, entry in chunk:
            parts.setdefault(shard_of(player_id, shards), ["1"]).extend(
                (composite, player_id, entry)
            )
        return parts
    pairs: dict[int, list[str]] = {}
    if shards == 1:
        # One set: no shard to work out for each player (shard_of hashes the id).
        pairs[0] = [f"{composite} {player_id}" for player_id, composite in chunk]
    else:
        for player_id, composite in chunk:
            pairs.setdefault(shard_of(player_id, shards), []).append(f"{composite} {player_id}")
    return {shard: ["p", " ".join(texts)] for shard, texts in pairs.items()}


# How long a rebuild's marker and half-built set outlive its last renewal (a crashed rebuild
# must not leave the mirror writing twice forever). A running rebuild renews them from a thread
# (_Heartbeat), also while PostgreSQL sorts before the first chunk.
REBUILD_TTL_SECONDS = 600


def rebuild_standings(
    season_id: int,
    chunks_after_start: Any,
    *,
    worsening: bool,
    on_chunk: Any = None,
    shards: int = 1,
    segmented: bool = False,
) -> int:
    """Build the season's ZSET anew (each shard's, with its segment sets) and swap it in, so
    readers see the old board or the new one, never a half-built one.

    The build set exists (with a marker) before the caller reads PostgreSQL: from then on the
    mirror writes every new standing into it as well, and the chunks read from PostgreSQL go in
    with the same GT/LT rule (`worsening`: LT), so neither a newer mirrored score nor a ban is
    lost by the swap. A correction made meanwhile is not undone by the snapshot's older copy
    either (see scripts.BUILD). `chunks_after_start` is called once the marker is set and yields
    chunks of (player_id, composite), or of (player_id, composite, segment entry) when
    `segmented`. Each shard swaps on its own (a script touches one slot).
    """
    every = [season_keys(season_id, shards, shard) for shard in range(shards)]
    rule = "LT" if worsening else "GT"
    _builds_drop(every)
    commands_run([("SET", keys.rebuilding, "1", "EX", REBUILD_TTL_SECONDS) for keys in every])
    heartbeat = _Heartbeat(
        [
            key
            for keys in every
            for key in (
                keys.rebuilding,
                keys.rebuild,
                keys.rebuild_corrected,
                keys.rebuild_segments,
                keys.rebuild_segment_names,
            )
        ],
        REBUILD_TTL_SECONDS,
        segments=[(keys.rebuild, keys.rebuild_segment_names) for keys in every],
    )
    # Each chunk is written on a thread while the next is read from PostgreSQL and packed: one
    # chunk in flight at most, so the chunks still go in best first and an error stops the build.
    writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rebuild-writer")
    try:
        written: Future[Any] | None = None
        for chunk in chunks_after_start():
            if not chunk:
                continue
            commands: list[tuple[Any, ...]] = [
                evalsha(ScriptCall(BUILD, list(every[shard]), [rule, REBUILD_TTL_SECONDS, *rows]))
                for shard, rows in _build_chunk(chunk, shards, segmented).items()
            ]
            commands += [("EXPIRE", keys.rebuilding, REBUILD_TTL_SECONDS) for keys in every]
            if written is not None:
                written.result()
            written = writer.submit(commands_run, commands)
            if on_chunk is not None:
                on_chunk(len(chunk))
        if written is not None:
            written.result()
        swaps = [ScriptCall(SWAP, list(keys), [claimed_identity()]) for keys in every]
        return sum(int(size) for size in scripts_run(swaps))
    finally:
        writer.shutdown(wait=True)
        heartbeat.stop()
        # A failed rebuild leaves the live set as it was and the mirror writing it alone.
        commands_run([("DEL", keys.rebuilding) for keys in every])
        _builds_drop(every)


def _builds_drop(every: Sequence[ShardKeys]) -> None:
    """Free what a rebuild built (or left behind when it crashed): the sets, their segment sets
    and the players corrected while it ran."""
    scripts_run(
        [
            ScriptCall(
                DROP,
                [
                    keys.rebuild,
                    keys.rebuild_segment_names,
                    keys.rebuild_segments,
                    keys.rebuild_corrected,
                ],
                [],
            )
            for keys in every
        ]
    )


# Segment sets a heartbeat renews in one round trip.
SEGMENT_RENEWAL_PAGE = 1000


def _pages(names: Iterable[Any]) -> Iterable[list[str]]:
    page: list[str] = []
    for name in names:
        page.append(name.decode() if isinstance(name, bytes) else name)
        if len(page) >= SEGMENT_RENEWAL_PAGE:
            yield page
            page = []
    if page:
        yield page


class _Heartbeat:
    """Renews the keys' TTL every third of it from a thread until stopped: a rebuild's marker
    must outlive PostgreSQL's sort before the first chunk (minutes at 100 million players), and
    still expire soon after a crash, since the thread dies with its process. A renewal that
    fails is tried again; a marker lost meanwhile (a Redis restarted) stays lost, and the swap
    refuses.

    `segments`: (build set, its segment names) of each shard; every segment set named there
    and the clan board are renewed too, a page of names at a time (SSCAN), so no one call
    blocks Redis however many segments there are. A chunk renews only the sets it wrote."""

    def __init__(
        self, keys: list[str], seconds: int, *, segments: Sequence[tuple[str, str]] = ()
    ) -> None:
        self._keys = keys
        self._segments = segments
        self._seconds = seconds
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rebuild-heartbeat", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stopped.wait(self._seconds / 3):
            try:
                commands_run([("EXPIRE", key, self._seconds) for key in self._keys])
                for built, names in self._segments:
                    self._segments_renew(built, names)
            except RedisError:
                logger.warning("could not renew a rebuild's keys", exc_info=True)

    def _segments_renew(self, built: str, names: str) -> None:
        commands_run([("EXPIRE", f"{built}:clans", self._seconds)])
        for page in _pages(client().sscan_iter(names, count=SEGMENT_RENEWAL_PAGE)):
            commands_run([("EXPIRE", f"{built}:{name}", self._seconds) for name in page])

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join()


def delete_standings(season_id: int, *, shards: int = 1) -> None:
    """Free every key of a season (its standings, their segment sets and their bookkeeping)."""
    every = [season_keys(season_id, shards, shard) for shard in range(shards)]
    scripts_run(
        [ScriptCall(DROP, [keys.standings, keys.segment_names], []) for keys in every]
        + [ScriptCall(DROP, [keys.rebuild, keys.rebuild_segment_names], []) for keys in every]
    )
    keys = [key for shard_keys in every for key in shard_keys]
    keys += checked_through_keys(season_id, shards)
    commands_run([("UNLINK", key) for key in [*keys, season_key(season_id, "reconcile-scan")]])
