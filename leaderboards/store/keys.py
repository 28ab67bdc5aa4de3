"""The key layout of the leaderboard gateway: every key of a season (or of one of its shards), and
which shard holds a player. Every key follows the deployment's prefix (LEADERBOARD_KEY_PREFIX), and
the keys one script touches share a hash tag, so a script stays in one Redis Cluster slot."""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Iterable
from typing import NamedTuple

from django.conf import settings
from redis.crc import key_slot


def standings_key(
    season_id: int, shards: int = 1, shard: int = 0, segment: str | None = None
) -> str:
    """The sorted set of a season's standings (of one of its shards), or of one segment of them
    (`segment` "dimension:value", see "Segments" below)."""
    key = _shard_key(season_id, shards, shard, "standings")
    return key if segment is None else segment_key(key, segment)


# --- Segments -----------------------------------------------------------------------------------
# A board that declares segment dimensions (country, platform) keeps, beside each shard's set, one
# set per value of each dimension: `<set>:country:DE`, named after the set it slices so it shares
# the set's slot, and a set being rebuilt has its own (`<build set>:country:DE`). Each member's
# values are kept in a hash beside the set (player -> "<stamp>|DE|pc", in the board's order of
# dimensions), and the "dimension:value" names in use in a set, so a swap or a deletion finds
# every segment set. The scripts build the segment sets' names from the set's (scripts.py).


def segment_key(standings: str, segment: str) -> str:
    return f"{standings}:{segment}"


# The clans' standings of a shard's set (`<set>:clans`, a name no segment has: a segment's has a
# colon), read as a segment of the set is. A clan's members are the segment `clan:<id>`.
CLANS = "clans"


def clan_members_segment(clan_id: str) -> str:
    return f"clan:{clan_id}"


def season_key(season_id: int, name: str) -> str:
    """A key of the season as a whole (shared answers, the reconciliation's cursor)."""
    return f"{settings.LEADERBOARD_KEY_PREFIX}{{s{season_id}}}:{name}"


# --- Shards -------------------------------------------------------------------------------------
# A season of a board with `shards` N > 1 spreads its players over N sorted sets by a stable hash
# of player_id. Each shard has its own hash tag, chosen so that the N tags fall in N different
# N-ths of the cluster's 16,384 slots: on a cluster whose nodes hold equal runs of slots (what
# `redis-cli --cluster create` makes) shard i lives on node i, and on more nodes they still
# spread. Each shard has its own bookkeeping (banned players, rebuild marker and set) in its
# slot, so every script touches one slot. With one shard the keys are the season's own `{s<id>}`.

_CLUSTER_SLOTS = 16384
_shard_tags: dict[tuple[int, int, int], str] = {}


def _shard_tag(season_id: int, shards: int, shard: int) -> str:
    if shards == 1:
        return f"s{season_id}"
    found = _shard_tags.get((season_id, shards, shard))
    if found is None:
        for salt in itertools.count():
            tag = f"s{season_id}.{shard}.{salt}"
            if key_slot(tag.encode()) * shards // _CLUSTER_SLOTS == shard:
                found = _shard_tags[(season_id, shards, shard)] = tag
                break
    return found  # type: ignore[return-value]


def _shard_key(season_id: int, shards: int, shard: int, name: str) -> str:
    return f"{settings.LEADERBOARD_KEY_PREFIX}{{{_shard_tag(season_id, shards, shard)}}}:{name}"


def shard_of(player_id: str, shards: int) -> int:
    """The shard that holds a player: CRC-32 of the id, the same in every process and release."""
    return 0 if shards == 1 else zlib.crc32(player_id.encode()) % shards


def banned_key(season_id: int, shards: int = 1, shard: int = 0) -> str:
    """The banned players of the season's shard: the mirror never writes them."""
    return _shard_key(season_id, shards, shard, "banned")


def whole_key(season_id: int, shards: int = 1, shard: int = 0) -> str:
    """The shard's "whole" marker (see whole.py)."""
    return _shard_key(season_id, shards, shard, "whole")


class ShardKeys(NamedTuple):
    """The keys the writes' scripts touch, all in the shard's slot, in the order the scripts
    name them (KEYS[1] ... KEYS[11])."""

    standings: str  # the live set
    banned: str  # the banned players
    rebuilding: str  # the marker of a rebuild in progress
    rebuild: str  # the set it builds
    whole: str  # the marker of a whole set
    corrected: str  # the corrected players (see "Corrections" at scripts.CORRECT)
    rebuild_corrected: str  # the players corrected while the rebuild runs
    segments: str  # each member's segment values (see "Segments" above)
    rebuild_segments: str  # the same, of the set being built
    segment_names: str  # the "dimension:value" names in use in the live set
    rebuild_segment_names: str  # the same, in the set being built


def season_keys(season_id: int, shards: int = 1, shard: int = 0) -> ShardKeys:
    def key(name: str) -> str:
        return _shard_key(season_id, shards, shard, name)

    return ShardKeys(
        standings_key(season_id, shards, shard),
        banned_key(season_id, shards, shard),
        key("rebuilding"),
        key("rebuild"),
        whole_key(season_id, shards, shard),
        key("corrected"),
        key("rebuild-corrected"),
        key("segments"),
        key("rebuild-segments"),
        key("segment-names"),
        key("rebuild-segment-names"),
    )


def player_keys(season_id: int, shards: int, player_id: str) -> ShardKeys:
    return season_keys(season_id, shards, shard_of(player_id, shards))


def standings_keys(season_id: int, shards: int, segment: str | None = None) -> list[str]:
    """The live set of every shard (or their sets of one segment)."""
    return [standings_key(season_id, shards, shard, segment) for shard in range(shards)]


def by_shard(player_ids: Iterable[str], shards: int) -> dict[int, list[str]]:
    """The players grouped by the shard that holds them."""
    groups: dict[int, list[str]] = {}
    for player_id in player_ids:
        groups.setdefault(shard_of(player_id, shards), []).append(player_id)
    return groups


def checked_through_keys(season_id: int, shards: int) -> list[str]:
    """Where reconciliation records, per shard, the time through which the set was found to hold
    PostgreSQL's totals (see reconciliation.py)."""
    return [_shard_key(season_id, shards, shard, "checked-through") for shard in range(shards)]


def identity_key() -> str:
    """The identity of the database whose standings Redis holds (see database.py)."""
    return f"{settings.LEADERBOARD_KEY_PREFIX}identity"


def player_banned_key(season_id: int, shards: int, player_id: str) -> str:
    return banned_key(season_id, shards, shard_of(player_id, shards))
