"""The leaderboard's tests again, with the leaderboard data on a real Redis Cluster of three
primaries (LEADERBOARD_REDIS_CLUSTER): the mirror, the reads in both rank styles, rebuilds,
reconciliation and season close must give exactly the answers they give on one Redis, so the same
tests with the same expected values run here unchanged (the event loop's reads:
test_fast_reads_on_cluster.py)."""

from __future__ import annotations

import pytest
from django.conf import settings

from leaderboards import store
from leaderboards.store import StandingWrite
from leaderboards.store.keys import banned_key
from tests.redis_cluster import LocalRedisCluster

from .test_api_reads import *  # noqa: F403
from .test_closing import *  # noqa: F403
from .test_mirror import *  # noqa: F403
from .test_reconciliation import *  # noqa: F403

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("leaderboard_on_cluster")]


def test_seasons_land_on_different_nodes_each_with_all_its_keys(redis_cluster: LocalRedisCluster):
    # given: six seasons' standings, a ban and a rebuild marker each
    seasons = range(1, 7)
    store.write_standings(StandingWrite(season, f"p{season}", 10 * season) for season in seasons)
    store.players_ban(dict.fromkeys(seasons, 1), "cheater")

    # then: every key of a season is on one node (one slot), and the seasons are spread
    held = redis_cluster.keys_by_port(f"{settings.LEADERBOARD_KEY_PREFIX}*")
    node_of = {}
    for season in seasons:
        keys = {store.standings_key(season), banned_key(season)}
        holders = [port for port, found in held.items() if keys & found]
        assert len(holders) == 1, (season, holders)
        assert keys <= held[holders[0]]
        node_of[season] = holders[0]
    assert len(set(node_of.values())) > 1, node_of
    with redis_cluster.node(redis_cluster.ports[0]) as node:
        slots = {node.cluster("keyslot", store.standings_key(s)) for s in seasons}
    assert len(slots) == len(seasons)


def test_a_pipelined_script_call_asks_no_other_node_for_its_keys(redis_cluster: LocalRedisCluster):
    def key_lookups() -> int:
        """COMMAND GETKEYS answered by the nodes so far."""
        total = 0
        for port in redis_cluster.ports:
            with redis_cluster.node(port) as node:
                total += (
                    node.info("commandstats").get("cmdstat_command|getkeys", {}).get("calls", 0)
                )
        return total

    # given
    before = key_lookups()

    # when: the mirror writes six seasons' standings, one script call each, in one pipeline
    store.write_standings(
        StandingWrite(season, f"p{season}", 10 * season) for season in range(1, 7)
    )

    # then: each call went to its season's node alone, so a node down elsewhere cannot fail it
    assert key_lookups() == before
    assert [store.scores_of(season, [f"p{season}"]) for season in range(1, 7)] == [
        [10 * season] for season in range(1, 7)
    ]
