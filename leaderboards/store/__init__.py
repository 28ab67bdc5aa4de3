"""The Redis gateway: the only package that names a Redis key or runs a sorted-set command.

One ZSET per season holds every player's composite score (see scoring.py). Keys carry the
season in a hash tag, `{s<id>}`, so a season's live key and its rebuild key share a Redis
Cluster slot and sharding boards over a cluster stays a change to this package alone.
Lua scripts are registered once per process and run by SHA; the connections, the calls by SHA
and their recovery when Redis forgot a script are config/building_blocks/redis.py's, which names no
key.

Callers import the package (`from leaderboards import store`) and use the names below; each
module holds one job, and imports only the ones listed before it:
- keys.py: the key layout, hash tags and shards (which shard holds a player).
- scripts.py, read_scripts.py: the Lua sources of the writes (markers, claims) and of the reads.
- rows.py: what a read answers (Standing, BatchRead) and how a reply's rows become standings.
- database.py: Redis tied to the database it mirrors (the identity claim), the sweep of keys.
- writes.py: the mirror's writes, corrections, bans, compare-and-set, the rebuild, deletion.
- whole.py: the "whole" markers and StandingsNotWhole.
- claims.py: a season's heal claim and operators' job claims.
- caches.py: shared answers (the top pages).
- profiles.py: the profile directory (names and avatars, on the `profiles()` Redis role).
- reconciliation.py: reconciliation's scan, its cursor and its checked-through points.
- single.py: reads of one sorted set, as script calls and replies.
- sharded.py: reads of a sharded board, as plans of round trips, and their drivers.
- clans.py: a sharded season's clan board, put together from its shards' parts.
- reads.py: the reads callers make, synchronous and from the event loop.
"""

# The connection's client, for the tests and tools that look at Redis beside the gateway.
from config.building_blocks.redis import client

from .caches import (
    SharedAnswer,
    ashared_answer_get,
    shared_answer_get,
    shared_answer_put,
    top_answer_key,
)
from .claims import (
    heal_claim,
    heal_release,
    season_job_done,
    season_job_queue_claim,
    season_job_run_claim,
)
from .clans import clans_together
from .database import delete_prefixed_keys, identity_claim, identity_current, ping
from .keys import CLANS, clan_members_segment, season_keys, shard_of, standings_key
from .profiles import Profile, aprofiles_read, profiles_file, profiles_read
from .reads import (
    aplayer_banned_in,
    aread_around,
    aread_rank,
    board_size,
    iter_ranked_rows,
    iter_standings,
    player_banned_in,
    read_around,
    read_batch,
    read_many,
    read_page,
    read_rank,
    scores_of,
    season_banned_players,
    segment_names,
    standings_exist,
)
from .reconciliation import (
    checked_through,
    checked_through_set,
    reconcile_scan_cursor,
    reconcile_scan_cursor_set,
    scan_standings,
    segment_entries_held,
)
from .rows import BatchRead, RankedRow, Standing
from .whole import StandingsNotWhole, standings_mark_whole, standings_whole
from .writes import (
    UNREAD,
    Crossing,
    Mirrored,
    Move,
    NotWhole,
    StandingWrite,
    compare_and_set,
    delete_standings,
    mirror_standings,
    players_ban,
    players_unban,
    rebuild_standings,
    remove_players,
    standing_correct,
    write_standings,
)

__all__ = [
    "CLANS",
    "UNREAD",
    "BatchRead",
    "Crossing",
    "Mirrored",
    "Move",
    "NotWhole",
    "Profile",
    "SharedAnswer",
    "RankedRow",
    "Standing",
    "StandingWrite",
    "StandingsNotWhole",
    "aplayer_banned_in",
    "aprofiles_read",
    "aread_around",
    "aread_rank",
    "ashared_answer_get",
    "board_size",
    "clan_members_segment",
    "clans_together",
    "checked_through",
    "checked_through_set",
    "client",
    "compare_and_set",
    "delete_prefixed_keys",
    "delete_standings",
    "heal_claim",
    "heal_release",
    "identity_claim",
    "identity_current",
    "iter_ranked_rows",
    "iter_standings",
    "mirror_standings",
    "ping",
    "player_banned_in",
    "players_ban",
    "players_unban",
    "profiles_file",
    "profiles_read",
    "read_around",
    "read_batch",
    "read_many",
    "read_page",
    "read_rank",
    "rebuild_standings",
    "reconcile_scan_cursor",
    "reconcile_scan_cursor_set",
    "remove_players",
    "scan_standings",
    "season_keys",
    "segment_entries_held",
    "segment_names",
    "scores_of",
    "season_banned_players",
    "season_job_done",
    "season_job_queue_claim",
    "season_job_run_claim",
    "shard_of",
    "shared_answer_get",
    "shared_answer_put",
    "standing_correct",
    "standings_exist",
    "standings_key",
    "standings_mark_whole",
    "standings_whole",
    "top_answer_key",
    "write_standings",
]
