"""`player.threshold`: a player entered or left one of a board's top-N edges, told to the game
backends that want it, with whoever the same write pushed out or pulled in."""

from __future__ import annotations

import json

import pytest

from leaderboards.thresholds import _tier_edges_read, thresholds_wanted
from seasons.models import Board, RewardTier
from tests.factories import BoardFactory, SeasonFactory, WebhookEndpointFactory
from webhooks import selectors as webhook_selectors
from webhooks.models import WebhookEvent

pytestmark = pytest.mark.django_db


def _crossings(receiver) -> list[tuple[str, int, bool, int]]:
    events = [json.loads(post.body) for post in receiver.received]
    assert {event["type"] for event in events} <= {"player.threshold"}
    return sorted(
        (e["data"]["player_id"], e["data"]["top"], e["data"]["entered"], e["data"]["rank"])
        for e in events
    )


def test_a_climb_to_first_is_told_with_everyone_it_pushed_past_an_edge(
    make_receiver, post_scores, season
):
    Board.objects.filter(pk=season.board_id).update(rank_thresholds=[1, 3])
    RewardTier.objects.create(board=season.board, reward_code="podium", rank_from=1, rank_to=2)
    for player_id, points in (("a", 300), ("b", 200), ("c", 100), ("d", 50)):
        post_scores({"player_id": player_id, "points": points, "match_id": f"m-{player_id}"})
    receiver = make_receiver()
    WebhookEndpointFactory(url=receiver.url, event_types=["player.threshold"])

    post_scores({"player_id": "d", "points": 300, "match_id": "m-d-2"})  # d: 350, first
    post_scores({"player_id": "e", "points": 10, "match_id": "m-e"})  # fifth: no edge crossed

    assert _crossings(receiver) == [
        ("a", 1, False, 2),
        ("b", 2, False, 3),
        ("c", 3, False, 4),
        ("d", 1, True, 1),
        ("d", 2, True, 1),
        ("d", 3, True, 1),
    ]
    event = json.loads(receiver.received[0].body)
    assert set(event["data"]) == {"board", "season", "player_id", "top", "entered", "rank"}
    assert (event["data"]["board"], event["data"]["season"]) == ("global", "s1")


def test_no_endpoint_wanting_it_or_a_sharded_board_writes_no_event(post_scores, season):
    WebhookEndpointFactory(event_types=["player.banned"])
    sharded = SeasonFactory(board=BoardFactory(slug="sharded", shards=2), slug="t1")
    WebhookEndpointFactory(event_types=["player.threshold"], boards=[sharded.board])

    for board in ("global", "sharded"):
        for player_id, points in (("a", 300), ("b", 200)):
            post_scores(
                {
                    "board": board,
                    "player_id": player_id,
                    "points": points,
                    "match_id": f"{board}-{player_id}",
                }
            )

    assert not WebhookEvent.objects.exists()


def test_the_edges_are_read_once_per_cache_window_and_a_new_tier_is_heard_after_it(
    settings, season, django_assert_num_queries
):
    settings.WEBHOOK_WANTED_CACHE_SECONDS = 60
    _tier_edges_read.clear()
    webhook_selectors._wanted.clear()
    WebhookEndpointFactory(event_types=["player.threshold"])
    Board.objects.filter(pk=season.board_id).update(rank_thresholds=[1])
    RewardTier.objects.create(board=season.board, reward_code="podium", rank_from=1, rank_to=3)
    season.refresh_from_db()
    season.board.refresh_from_db()

    assert thresholds_wanted([season]) == {season.pk: [1, 3]}
    RewardTier.objects.create(board=season.board, reward_code="top", rank_from=4, rank_to=10)
    with django_assert_num_queries(0):  # the endpoints and the tiers, both from memory
        assert thresholds_wanted([season]) == {season.pk: [1, 3]}

    _tier_edges_read.clear()  # what the window's end does
    assert thresholds_wanted([season]) == {season.pk: [1, 3, 10]}
