"""A sharded season on a real three-node Redis Cluster: each shard on its own node with its own
bookkeeping, and every write path (mirror, bans, corrections, rebuild, reconciliation, removal)
working per shard."""

from __future__ import annotations

import pytest
from django.conf import settings

from leaderboards import reconciliation, services, store
from matches.models import Player
from tests.factories import BoardFactory, PlayerTotalFactory, SeasonFactory
from tests.mirroring import expected_composite, mirror_totals
from tests.redis_cluster import LocalRedisCluster

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("leaderboard_on_cluster")]

SHARDS = 3


@pytest.fixture
def sharded(db):
    return SeasonFactory(board=BoardFactory(slug="sharded", shards=SHARDS), slug="s")


def _players_by_shard(count_per_shard: int) -> dict[int, list[str]]:
    """Player ids, a few on every shard (by the store's own rule)."""
    found: dict[int, list[str]] = {shard: [] for shard in range(SHARDS)}
    i = 0
    while min(len(ids) for ids in found.values()) < count_per_shard:
        player_id = f"shard-test-{i}"
        ids = found[store.shard_of(player_id, SHARDS)]
        if len(ids) < count_per_shard:
            ids.append(player_id)
        i += 1
    return found


def _write(season, scores: dict[str, int]) -> int:
    return store.write_standings(
        store.StandingWrite(season.pk, player_id, composite, shards=SHARDS)
        for player_id, composite in scores.items()
    )


def test_each_shard_lives_on_its_own_node_with_its_bookkeeping(
    sharded, redis_cluster: LocalRedisCluster
):
    players = _players_by_shard(2)
    _write(sharded, {p: 10 for ids in players.values() for p in ids})
    store.players_ban({sharded.pk: SHARDS}, players[1][0])

    held = redis_cluster.keys_by_port(f"{settings.LEADERBOARD_KEY_PREFIX}*")
    node_of = {key: port for port, keys in held.items() for key in keys}
    live = [store.standings_key(sharded.pk, SHARDS, shard) for shard in range(SHARDS)]
    assert len({node_of[key] for key in live}) == SHARDS  # three shards, three nodes
    banned = next(key for key in node_of if key.endswith(":banned"))
    assert node_of[banned] == node_of[live[1]]  # the ban sits beside the player's shard
    for shard, key in enumerate(live):
        assert set(store.client().zrange(key, 0, -1)) == set(players[shard]) - {players[1][0]}


def test_bans_corrections_and_compare_and_set_touch_the_players_shard_only(sharded):
    players = _players_by_shard(1)
    a, b, c = players[0][0], players[1][0], players[2][0]
    _write(sharded, {a: 100, b: 200, c: 300})

    store.players_ban({sharded.pk: SHARDS}, b)
    assert _write(sharded, {b: 999}) == 0  # kept off while banned
    assert store.player_banned_in(sharded.pk, b, shards=SHARDS)
    assert store.read_rank(sharded.pk, b, shards=SHARDS) == (2, None)

    store.players_unban({sharded.pk: SHARDS}, b)
    assert _write(sharded, {b: 250}) == 1
    # down, which GT never does
    assert store.standing_correct(sharded.pk, c, 50, stamp=1, shards=SHARDS)
    assert not store.compare_and_set(sharded.pk, a, expected=1, composite=7, shards=SHARDS)
    assert store.compare_and_set(sharded.pk, a, expected=100, composite=400, shards=SHARDS)

    assert store.scores_of(sharded.pk, [a, b, c, "nobody"], shards=SHARDS) == [400, 250, 50, None]
    size, page = store.read_page(sharded.pk, offset=0, limit=10, shards=SHARDS)
    assert (size, [(s.player_id, s.rank) for s in page]) == (3, [(a, 1), (b, 2), (c, 3)])
    assert store.remove_players(sharded.pk, [a, c], shards=SHARDS) == 2
    assert store.board_size(sharded.pk, shards=SHARDS) == 1


def test_a_rebuild_swaps_every_shard_and_keeps_a_write_made_while_it_ran(sharded):
    players = _players_by_shard(3)
    everyone = [p for ids in players.values() for p in ids]
    _write(sharded, {p: 5 for p in everyone} | {"gone": 1})
    late = players[2][0]

    def chunks():
        # the mirror writes while the rebuild reads PostgreSQL
        _write(sharded, {late: 10_000})
        yield [(p, 100 + i) for i, p in enumerate(everyone)]

    size = store.rebuild_standings(sharded.pk, chunks, worsening=False, shards=SHARDS)

    assert size == len(everyone)  # "gone" is not in PostgreSQL's chunks
    scores = store.scores_of(sharded.pk, [*everyone, "gone"], shards=SHARDS)
    assert scores[everyone.index(late)] == 10_000
    assert scores[-1] is None
    assert sorted(s for s in scores if s is not None) == sorted(
        [100 + i for i, p in enumerate(everyone) if p != late] + [10_000]
    )
    # nothing of the rebuild is left behind: markers and build sets are gone
    assert not [
        key for key in store.client().scan_iter(match="*rebuild*") if f"s{sharded.pk}." in key
    ]


def test_reconciliation_repairs_drift_and_finds_strangers_on_every_shard(sharded):
    totals = PlayerTotalFactory.create_batch(9, season=sharded, points=10)
    mirror_totals(totals)
    wrong, missing, banned = totals[0], totals[1], totals[2]
    store.write_standings([store.StandingWrite(sharded.pk, wrong.player_id, 2**50, shards=SHARDS)])
    store.remove_players(sharded.pk, [missing.player_id], shards=SHARDS)
    strangers = [ids[0] for ids in _players_by_shard(1).values()]  # one on every shard
    _write(sharded, dict.fromkeys(strangers, 2**40))
    Player.objects.filter(player_id=banned.player_id).update(banned_at=banned.updated_at)

    tally = reconciliation.season_reconcile(season=sharded)

    assert (tally.drift, tally.fixed) == (6, 6)
    assert store.scores_of(
        sharded.pk,
        [wrong.player_id, missing.player_id, banned.player_id, *strangers],
        shards=SHARDS,
    ) == [expected_composite(wrong), expected_composite(missing), None, None, None, None]
    assert reconciliation.season_reconcile(season=sharded).drift == 0


def test_the_scan_walks_every_shard_once_and_then_starts_over(sharded):
    players = _players_by_shard(4)
    _write(sharded, {p: 1 for ids in players.values() for p in ids})

    seen, cursor = [], 0
    while True:
        cursor, members = store.scan_standings(sharded.pk, cursor=cursor, count=2, shards=SHARDS)
        seen += [player_id for player_id, _ in members]
        if cursor == 0:
            break

    assert sorted(set(seen)) == sorted(p for ids in players.values() for p in ids)


def test_a_season_rebuilt_from_postgresql_and_deleted_leaves_no_key(sharded):
    totals = PlayerTotalFactory.create_batch(12, season=sharded)

    assert services.season_rebuild_standings(season=sharded) == 12
    walked = [
        s for page in store.iter_standings(sharded.pk, page_size=5, shards=SHARDS) for s in page
    ]
    _, page = store.read_page(sharded.pk, offset=0, limit=12, shards=SHARDS)
    assert walked == page
    assert {s.player_id for s in walked} == {t.player_id for t in totals}

    store.delete_standings(sharded.pk, shards=SHARDS)

    assert not store.standings_exist(sharded.pk, shards=SHARDS)
    assert not [key for key in store.client().scan_iter(match=f"*s{sharded.pk}.*")]


def test_a_shard_lost_alone_is_rebuilt_by_the_next_reconciliation(sharded):
    totals = PlayerTotalFactory.create_batch(30, season=sharded, points=10)
    mirror_totals(totals)
    lost = store.standings_key(sharded.pk, SHARDS, 1)
    on_lost = [t.player_id for t in totals if store.shard_of(t.player_id, SHARDS) == 1]
    assert on_lost and len(on_lost) < len(totals) / 2  # a third: not "most of the board"
    store.client().unlink(lost)  # its node came back empty

    reconciliation.season_reconcile(season=sharded)

    assert store.scores_of(sharded.pk, [t.player_id for t in totals], shards=SHARDS) == [
        expected_composite(t) for t in totals
    ]
