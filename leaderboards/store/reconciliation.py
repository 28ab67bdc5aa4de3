"""Reconciliation's bookkeeping in Redis (leaderboards/reconciliation.py): its scan over a season's
members, where that scan stopped, and the time through which each shard was found to hold
PostgreSQL's totals."""

from __future__ import annotations

from config.building_blocks.redis import client, commands_run

from .keys import by_shard, checked_through_keys, season_key, season_keys, standings_key


def scan_standings(
    season_id: int, *, cursor: int, count: int, shards: int = 1
) -> tuple[int, list[tuple[str, int]]]:
    """One ZSCAN step over the season's members: the next cursor (0 at the end) and a few
    (player_id, composite) pairs. A member present for a whole scan is returned at least once.
    On a sharded board the cursor walks the shards in turn: ZSCAN's cursor * shards + shard."""
    shard, zscan_cursor = cursor % shards, cursor // shards
    next_cursor, members = client().zscan(
        standings_key(season_id, shards, shard), cursor=zscan_cursor, count=count
    )
    found = [(player_id, int(score)) for player_id, score in members]
    if int(next_cursor) == 0:
        # This shard is done: the next one from its start, or the end of the whole scan.
        return (shard + 1 if shard + 1 < shards else 0), found
    return int(next_cursor) * shards + shard, found


def segment_entries_held(
    season_id: int, player_ids: list[str], *, shards: int = 1
) -> dict[str, str | None]:
    """The segment entry Redis holds for each player (None for none), one HMGET a shard."""
    groups = by_shard(player_ids, shards)
    replies = commands_run(
        [
            ("HMGET", season_keys(season_id, shards, shard).segments, *ids)
            for shard, ids in groups.items()
        ]
    )
    held: dict[str, str | None] = {}
    for ids, entries in zip(groups.values(), replies, strict=True):
        held.update(zip(ids, entries, strict=True))
    return held


def reconcile_scan_cursor(season_id: int) -> int:
    """Where reconciliation's scan of the season's members stopped (0: at the start)."""
    return int(client().get(season_key(season_id, "reconcile-scan")) or 0)


def reconcile_scan_cursor_set(season_id: int, cursor: int) -> None:
    client().set(season_key(season_id, "reconcile-scan"), cursor)


# Reconciliation's recent pass (leaderboards/reconciliation.py) leaves, beside each shard's set
# and after it compared them, the time through which the set was found to hold PostgreSQL's
# totals. A Redis that comes back older than it was (restarted from an AOF written every second,
# a replica promoted behind its primary, a restored copy) keeps a prefix of its writes: one that
# lost mirror writes lost this point with them, or kept an older one, so the next pass re-checks
# every total changed since the point Redis went back to, whatever the loss.


def checked_through(season_id: int, *, shards: int = 1) -> float | None:
    """The earliest point (a Unix time) recorded over the season's shards; None where a shard
    has none."""
    found = commands_run([("GET", key) for key in checked_through_keys(season_id, shards)])
    if any(at is None for at in found):
        return None
    return min(float(at) for at in found)


def checked_through_set(season_id: int, at: float, *, shards: int = 1) -> None:
    commands_run([("SET", key, repr(at)) for key in checked_through_keys(season_id, shards)])
