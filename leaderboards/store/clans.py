"""The clans' standings of a sharded season: each shard holds its own members' part of every
clan's standing (`<set>:clans`, kept by the mirror's script), so the season's is read whole and
put together here: a sum of the parts, or the best of them. (A season of one shard is read as a
segment of its set: reads.py with segment CLANS.)"""

from __future__ import annotations

from config.building_blocks.redis import commands_run, replica_commands_run

from .keys import CLANS, standings_keys, whole_key
from .rows import pairs
from .whole import StandingsNotWhole, readable, whole_or_raise


def clans_together(
    season_id: int, *, shards: int, summed: bool, shared: bool = False, whole: bool = False
) -> list[tuple[str, int]]:
    """Every clan of the season with its standing, best first (ties: the clan id that sorts
    last first, as one set orders them). One round trip: every shard's part and its marker."""
    keys = standings_keys(season_id, shards, CLANS)
    markers = [("GET", whole_key(season_id, shards, shard)) for shard in range(shards)]
    run = replica_commands_run if shared else commands_run
    with whole_or_raise():
        replies = run([*(("ZRANGE", key, 0, -1, "WITHSCORES") for key in keys), *markers])
    if not readable(replies[shards:], whole):
        raise StandingsNotWhole(f"season {season_id}: a shard has no whole standings in Redis")
    standings: dict[str, int] = {}
    for reply in replies[:shards]:
        for clan_id, score in pairs(reply):
            if summed:
                standings[clan_id] = standings.get(clan_id, 0) + score
            else:
                standings[clan_id] = max(standings.get(clan_id, score), score)
    return sorted(standings.items(), key=lambda row: (row[1], row[0]), reverse=True)
