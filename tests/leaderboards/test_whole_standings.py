"""A season's standings lost with their Redis (restarted empty, then refilled in part by the
mirror) are never read as a smaller board: reads answer 503 until the season is rebuilt, which
the mirror's next write sets off (leaderboards/store/whole.py)."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from leaderboards import closing, reconciliation, selectors, services, store
from leaderboards.store.keys import whole_key
from matches.models import PlayerTotal
from matches.outbox import StandingChange
from matches.services import player_ban
from seasons.models import Season
from server.asgi import application
from tests.asgi import asgi_get
from tests.factories import BoardFactory, PlayerTotalFactory, SeasonFactory
from tests.mirroring import expected_composite, mirror_totals

READS = [
    "/api/v1/leaderboard/top?limit=10",
    "/api/v1/leaderboard/players/p2",
    "/api/v1/leaderboard/players/p2/around?n=1",
]


def lose(season: Season) -> None:
    """What a Redis restarted empty does to the season: every key of it gone."""
    store.delete_standings(season.pk, shards=season.shards)


def ranks_in_postgres(season: Season) -> list[tuple[str, int]]:
    totals = PlayerTotal.objects.filter(season=season).select_related("season__board")
    # The set's order: the larger composite first, of equal ones the id later in byte order.
    rows = [(t.player_id, expected_composite(t)) for t in totals]
    return sorted(rows, key=lambda row: (row[1], row[0]), reverse=True)


def ranks_in_redis(season: Season) -> list[tuple[str, int]]:
    pages = store.iter_standings(season.pk, shards=season.shards)
    return [(s.player_id, s.composite) for page in pages for s in page]


def post(post_scores: Any, player_id: str, points: int) -> None:
    response = post_scores({"player_id": player_id, "points": points, "match_id": f"m-{player_id}"})
    assert response.status_code == 201, response.json()


def test_a_new_season_is_marked_whole_by_its_first_mirrored_result(post_scores, season):
    assert season.standings_whole_since is None
    assert not store.standings_whole(season.pk)

    post(post_scores, "p1", 10)

    season.refresh_from_db()
    assert season.standings_whole_since is not None
    assert store.standings_whole(season.pk)


def test_a_season_without_results_is_read_as_empty_not_as_lost(client, season):
    response = client.get("/api/v1/leaderboard/top")

    assert response.status_code == 200, response.json()
    assert response.json()["entries"] == []


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("shards", [1, 3])
def test_reads_of_lost_standings_answer_503_until_the_next_result_has_them_rebuilt(
    client, post_scores, shards
):
    # given: a season marked whole by its results, read once (so this process knows)
    season = SeasonFactory(
        board=BoardFactory(slug="global", name="Global", shards=shards), slug="s1"
    )
    for player_id, points in (("p1", 30), ("p2", 20), ("p3", 10)):
        post(post_scores, player_id, points)
    assert client.get("/api/v1/leaderboard/players/p2").json()["rank"] == 2

    # when: its Redis comes back empty, and nothing has been mirrored since (its rebuild is
    # queued already, and has not run yet)
    lose(season)
    assert store.heal_claim(season.pk, seconds=60)

    # then: every read, through Django and through the event loop, is a 503, not an empty board
    for path in READS:
        for response in (client.get(path), asgi_get(application, path)):
            assert response.status_code == 503, (path, response.content)
            assert response.json()["error"]["code"] == "unavailable"
    # and a rank check of friends as well
    friends = client.post("/api/v1/leaderboard/ranks", {"player_ids": ["p1"]}, format="json")
    assert friends.status_code == 503

    # when: the next result arrives once that rebuild is no longer awaited (the mirror finds
    # the set unmarked and has it rebuilt)
    store.heal_release(season.pk)
    post(post_scores, "p4", 5)

    # then: the board is PostgreSQL's again, lost players included, and reads answer
    assert ranks_in_redis(season) == ranks_in_postgres(season)
    assert client.get("/api/v1/leaderboard/players/p2").json()["rank"] == 2
    assert asgi_get(application, "/api/v1/leaderboard/players/p2").json()["rank"] == 2
    assert client.get("/api/v1/leaderboard/top").json()["total_players"] == 4


@pytest.mark.django_db(transaction=True)
def test_one_lost_shard_is_enough_for_a_503(client, post_scores):
    season = SeasonFactory(board=BoardFactory(slug="global", name="Global", shards=3), slug="s1")
    for player_id, points in (("p1", 30), ("p2", 20), ("p3", 10)):
        post(post_scores, player_id, points)
    assert client.get("/api/v1/leaderboard/top").status_code == 200

    store.client().delete(whole_key(season.pk, 3, store.shard_of("p3", 3)))
    assert store.heal_claim(season.pk, seconds=60)  # its rebuild queued, not run yet

    assert client.get("/api/v1/leaderboard/players/p1").status_code == 503
    assert asgi_get(application, "/api/v1/leaderboard/top").status_code == 503


def test_store_reads_that_must_be_whole_refuse_a_set_without_its_marker(season):
    store.write_standings([store.StandingWrite(season.pk, "p1", 2**40)])

    # A set never marked answers when the read does not ask for a whole one...
    assert store.read_rank(season.pk, "p1")[0] == 1
    # ...and not when it does, on every read.
    with pytest.raises(store.StandingsNotWhole):
        store.read_rank(season.pk, "p1", whole=True)
    with pytest.raises(store.StandingsNotWhole):
        store.read_page(season.pk, offset=0, limit=10, whole=True)
    with pytest.raises(store.StandingsNotWhole):
        store.read_around(season.pk, "p1", n=1, whole=True)
    with pytest.raises(store.StandingsNotWhole):
        store.read_many(season.pk, ["p1"], whole=True)
    with pytest.raises(store.StandingsNotWhole):
        store.read_batch(season.pk, top=3, player_ids=["p1"], arounds=[("p1", 1)], whole=True)
    with pytest.raises(store.StandingsNotWhole):
        list(store.iter_standings(season.pk, whole=True))

    store.standings_mark_whole(season.pk)

    assert store.read_rank(season.pk, "p1", whole=True)[0] == 1
    assert store.read_batch(season.pk, top=3, player_ids=["p1"], whole=True).players == [(1, 2**40)]


def test_a_rebuild_marks_the_standings_whole(season):
    PlayerTotalFactory(season=season, player__player_id="p1", points=5)

    services.season_rebuild_standings(season=season)

    season.refresh_from_db()
    assert store.standings_whole(season.pk)
    assert season.standings_whole_since is not None
    assert store.read_rank(season.pk, "p1", whole=True)[1] is not None


def test_a_mirror_write_into_a_lost_season_does_not_mark_it_whole(season):
    # given: a season whose standings were marked whole once, then lost with their Redis
    PlayerTotalFactory.create_batch(3, season=season)
    services.season_rebuild_standings(season=season)
    lose(season)
    store.heal_claim(season.pk, seconds=60)  # a rebuild already queued: this write queues none

    # when: the mirror writes one player back
    written = services.standings_mirror(
        changes=[StandingChange(0, season.pk, "p9", 2**40, season.board.standings_worsen)]
    )

    # then: the set holds that player but is not taken for whole
    assert written == 1
    assert store.board_size(season.pk) == 1
    assert not store.standings_whole(season.pk)
    season.refresh_from_db()
    assert season.standings_whole_since is not None


def test_reconciliation_rebuilds_a_lost_season_and_marks_one_never_marked(season):
    totals = PlayerTotalFactory.create_batch(3, season=season)
    other = SeasonFactory(board=BoardFactory(slug="other"), slug="o1")
    mirror_totals(totals)

    # A season never marked, with its standings all there: marked by the run.
    reconciliation.season_reconcile(season=season)
    season.refresh_from_db()
    assert season.standings_whole_since is not None
    assert store.standings_whole(season.pk)

    # The same season lost, then one player written back: rebuilt by the run, though most of
    # its players are there (the sample alone would not have seen it).
    lose(season)
    mirror_totals(totals[:2])
    reconciliation.season_reconcile(season=season)
    assert ranks_in_redis(season) == ranks_in_postgres(season)
    assert store.standings_whole(season.pk)

    # A season with no results at all: marked, and read as empty.
    reconciliation.season_reconcile(season=other)
    assert store.standings_whole(other.pk)
    assert store.read_page(other.pk, offset=0, limit=10, whole=True) == (0, [])


def test_a_process_learns_a_season_was_marked_without_its_copy_of_the_row(post_scores, season):
    # The read endpoints' copy of the season (cached) was taken before the first result.
    stale = Season.objects.get(pk=season.pk)
    assert not selectors.standings_whole_required(stale)

    post(post_scores, "p1", 10)

    # Looked up again once UNMARKED_LOOKUP_SECONDS have passed (here: at once).
    selectors._unmarked_looked_up.clear()
    assert selectors.standings_whole_required(stale)
    assert selectors.standings_whole_known(stale)


@pytest.mark.django_db(transaction=True)
def test_a_read_that_finds_a_still_season_lost_asks_for_its_rebuild(client, post_scores):
    # given: a season with results, then none (nothing will write into it), lost with its Redis
    season = SeasonFactory(board=BoardFactory(slug="global", name="Global"), slug="s1")
    for player_id, points in (("p1", 30), ("p2", 20), ("p3", 10)):
        post(post_scores, player_id, points)
    assert client.get("/api/v1/leaderboard/players/p3").json()["rank"] == 3
    lose(season)

    # when: a player reads their rank (through the event loop, then Django)
    first = asgi_get(application, "/api/v1/leaderboard/players/p3")

    # then: that read is a 503, and it had the season rebuilt (the test's Celery runs the
    # queued rebuild at once), so the next one answers from the whole board
    assert first.status_code == 503
    assert ranks_in_redis(season) == ranks_in_postgres(season)
    assert asgi_get(application, "/api/v1/leaderboard/players/p3").json()["rank"] == 3
    assert client.get("/api/v1/leaderboard/top").json()["total_players"] == 3


def test_a_rebuild_whose_set_was_lost_while_it_ran_is_not_swapped_in_nor_marked(season):
    # given: a season's standings, whole
    PlayerTotalFactory.create_batch(4, season=season)
    services.season_rebuild_standings(season=season)
    rows = list(store.iter_standings(season.pk))[0]

    def chunks_across_a_restart():
        yield [(s.player_id, s.composite) for s in rows[:2]]
        lose(season)  # its Redis restarts empty between two chunks of a rebuild
        yield [(s.player_id, s.composite) for s in rows[2:]]

    # when: a rebuild goes on across that restart
    with pytest.raises(redis.exceptions.ResponseError, match="REBUILDLOST"):
        store.rebuild_standings(season.pk, chunks_across_a_restart, worsening=False)

    # then: the half it built after the restart is neither the board nor marked whole
    assert store.board_size(season.pk) == 0
    assert not store.standings_whole(season.pk)


def test_a_season_is_not_marked_whole_if_its_set_lost_what_the_marker_saw(season):
    # given: a season never marked, whose set lost the player the mirror just wrote (its
    # Redis restarted between the write and the marking)
    PlayerTotalFactory.create_batch(3, season=season)

    # when
    assert not store.standings_mark_whole(season.pk, present={0: "gone"})
    services.season_standings_mark_first(season_id=season.pk, shards=1, present={0: "gone"})

    # then: it counts as marked from now on, and was rebuilt (the test's Celery runs the
    # queued rebuild at once) rather than marked whole empty
    season.refresh_from_db()
    assert season.standings_whole_since is not None
    assert store.standings_whole(season.pk)
    assert ranks_in_redis(season) == ranks_in_postgres(season)


@pytest.mark.django_db(transaction=True)
def test_a_closed_season_with_a_lost_shard_is_read_from_its_archive(client, post_scores):
    # given: a closed season of a board sharded over three sets, whose key is still kept
    season = SeasonFactory(board=BoardFactory(slug="global", name="Global", shards=3), slug="s1")
    for player_id, points in (("p1", 30), ("p2", 20), ("p3", 10), ("p4", 5)):
        post(post_scores, player_id, points)
    closing.season_close(season=season, force=True)
    path = "/api/v1/leaderboard/top?season=s1"
    archived = client.get(path).json()["entries"]
    assert [e["player_id"] for e in archived] == ["p1", "p2", "p3", "p4"]

    # when: one of its shards is lost with its node
    store.client().delete(
        store.standings_key(season.pk, 3, store.shard_of("p2", 3)),
        whole_key(season.pk, 3, store.shard_of("p2", 3)),
    )

    # then: its reads come from the archive, whole, not a 503 until the key expires
    response = client.get(path)
    assert response.status_code == 200
    assert response.json()["entries"] == archived


def test_a_season_healed_after_its_redis_came_back_empty_still_keeps_its_banned_players_off(
    client, post_scores, season
):
    # given: a banned player in a season whose Redis then comes back empty
    for player_id, points in (("p1", 30), ("p2", 20), ("cheat", 99)):
        post(post_scores, player_id, points)
    player_ban(player_id="cheat", actor=None, reason="aimbot")
    lose(season)

    # when: the season is healed, and the banned player's game server posts again
    assert services.season_heal(season_id=season.pk) == 2
    again = {"player_id": "cheat", "points": 5, "match_id": "m-cheat-2"}
    assert post_scores(again).status_code == 201

    # then: the player stays off the board and reads say why
    assert [player_id for player_id, _ in ranks_in_redis(season)] == ["p1", "p2"]
    answer = client.get("/api/v1/leaderboard/players/cheat")
    assert (answer.status_code, answer.json()["error"]["code"]) == (404, "player_banned")
