"""Asking for the rebuild of a season whose standings Redis lost (leaderboards/heals.py): a read
only raises, naming the season; whoever serves the request, the socket or the mirror's write
asks, at most once a while."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from leaderboards import heals, selectors, store, tasks
from leaderboards.live.reading import read_for_tick
from matches.models import PlayerTotal
from seasons.models import Season
from tests.factories import BoardFactory, SeasonFactory
from tests.mirroring import expected_composite


@pytest.fixture
def heal_asks() -> Iterator[list[int]]:
    """The seasons whose rebuild was asked for, queued nowhere."""
    asked: list[int] = []
    heals.connect(queue=asked.append)
    yield asked
    heals.connect(queue=tasks.queue_season_heal)


def post(post_scores, **points: int) -> None:
    for player_id, value in points.items():
        body = {"player_id": player_id, "points": value, "match_id": f"m-{player_id}"}
        assert post_scores(body).status_code == 201


def lose(season: Season) -> None:
    """What a Redis restarted empty does to the season: every key of it gone."""
    store.delete_standings(season.pk, shards=season.shards)


def ranks_in_postgres(season: Season) -> list[tuple[str, int]]:
    totals = PlayerTotal.objects.filter(season=season).select_related("season__board")
    rows = [(t.player_id, expected_composite(t)) for t in totals]
    return sorted(rows, key=lambda row: (row[1], row[0]), reverse=True)


def ranks_in_redis(season: Season) -> list[tuple[str, int]]:
    pages = store.iter_standings(season.pk, shards=season.shards)
    return [(s.player_id, s.composite) for page in pages for s in page]


@pytest.mark.django_db
def test_a_read_of_a_lost_season_raises_naming_it_and_asks_for_nothing(
    post_scores, season, heal_asks
):
    # given: a season marked whole by its results, then lost with its Redis
    post(post_scores, p1=30, p2=20)
    season.refresh_from_db()
    lose(season)

    # when / then: each read raises, naming the season (still a StandingsNotWhole: a 503)
    reads = [
        lambda: selectors.player_standing(season=season, player_id="p1"),
        lambda: selectors.player_around(season=season, player_id="p1", n=1),
        lambda: selectors.players_ranks(season=season, player_ids=["p1"]),
        lambda: selectors.player_seasons(player_id="p1"),
    ]
    for read in reads:
        with pytest.raises(selectors.SeasonStandingsLost) as raised:
            read()
        assert raised.value.season_id == season.pk
        assert isinstance(raised.value, store.StandingsNotWhole)

    # and: nothing was asked for, claimed or written
    assert heal_asks == []
    assert store.heal_claim(season.pk, seconds=60)
    assert store.board_size(season.pk) == 0


@pytest.mark.django_db
def test_a_lost_season_is_asked_to_be_rebuilt_once_a_while(season, heal_asks):
    heals.season_heal_queue(season_id=season.pk)
    heals.season_heal_queue(season_id=season.pk)

    assert heal_asks == [season.pk]

    # once the claim is let go (the rebuild ran), the next finding asks again
    store.heal_release(season.pk)
    heals.season_heal_queue(season_id=season.pk)
    assert heal_asks == [season.pk, season.pk]


@pytest.mark.django_db
def test_a_page_that_finds_a_still_season_lost_answers_503_and_has_it_rebuilt(client, post_scores):
    # given: the default board's running season with results, then none, lost with its Redis
    season = SeasonFactory(board=BoardFactory(slug="global", name="Global"), slug="s1")
    post(post_scores, p1=30, p2=20, p3=10)
    lose(season)

    # when: someone opens the board's page
    response = client.get("/")

    # then: the page says unavailable, and it had the season rebuilt (the test's Celery runs
    # the queued rebuild at once), so the next one shows the whole board
    assert response.status_code == 503
    assert ranks_in_redis(season) == ranks_in_postgres(season)
    assert client.get("/").context["top"]["total_players"] == 3


@pytest.mark.django_db(transaction=True)
def test_the_tickers_read_of_a_still_season_lost_has_it_rebuilt(post_scores):
    # given: a season with results, then none, lost with its Redis
    season = SeasonFactory(board=BoardFactory(slug="global", name="Global"), slug="s1")
    post(post_scores, p1=30, p2=20, p3=10)
    season.refresh_from_db()
    lose(season)

    # when: the live ticker reads it for its sockets
    with pytest.raises(store.StandingsNotWhole):
        read_for_tick(season, top=3, player_ids=["p1"], arounds=[])

    # then: it had the season rebuilt, and its next read is the whole board
    assert ranks_in_redis(season) == ranks_in_postgres(season)
    reading = read_for_tick(season, top=3, player_ids=["p1"], arounds=[])
    assert (reading.total_players, reading.standings) == (
        3,
        {"p1": (1, ranks_in_redis(season)[0][1])},
    )
