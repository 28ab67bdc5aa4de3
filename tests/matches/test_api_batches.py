"""Batches of results: all or nothing, one entry per item, the failing item named."""

import pytest

from leaderboards import store
from matches.models import MatchResult, PendingStanding, PlayerTotal

pytestmark = pytest.mark.django_db


def test_a_batch_commits_every_item_and_answers_one_entry_each(post_scores, season):
    body = [
        {"player_id": "p1", "points": 10, "match_id": "m1"},
        {"player_id": "p2", "points": 30, "match_id": "m1"},
        {"player_id": "p1", "points": 5, "match_id": "m2"},
    ]

    response = post_scores(body)

    assert response.status_code == 200
    assert [(e["status"], e["player_id"], e["total_points"]) for e in response.json()] == [
        ("accepted", "p1", 10),
        ("accepted", "p2", 30),
        ("accepted", "p1", 15),
    ]
    assert dict(PlayerTotal.objects.values_list("player_id", "points")) == {"p1": 15, "p2": 30}
    size, top = store.read_page(season.id, offset=0, limit=10)
    assert [(s.player_id, s.composite // 2**24) for s in top] == [("p2", 30), ("p1", 15)]


def test_an_invalid_item_fails_the_whole_batch_and_is_named(post_scores, season):
    body = [
        {"player_id": "p1", "points": 10, "match_id": "m1"},
        {"player_id": "p2", "points": -1, "match_id": "m1"},
        {"player_id": "p3", "points": 1, "match_id": "m1", "bogus": True},
    ]

    response = post_scores(body)

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["details"]["index"] == 1
    assert [item["index"] for item in error["details"]["items"]] == [1, 2]
    assert "points" in error["details"]["items"][0]["fields"]
    assert "Item 1" in error["message"]
    assert MatchResult.objects.count() == 0
    assert PlayerTotal.objects.count() == 0


def test_a_conflicting_item_rolls_the_batch_back(post_scores, season):
    post_scores({"player_id": "p1", "points": 10, "match_id": "m1"})

    response = post_scores(
        [
            {"player_id": "p2", "points": 7, "match_id": "m9"},
            {"player_id": "p1", "points": 11, "match_id": "m1"},
        ]
    )

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "conflict"
    assert response.json()["error"]["details"] == {"index": 1}
    assert list(MatchResult.objects.values_list("player_id", flat=True)) == ["p1"]
    assert dict(PlayerTotal.objects.values_list("player_id", "points")) == {"p1": 10}


def test_an_item_in_an_unknown_board_is_named(post_scores, season):
    response = post_scores(
        [
            {"player_id": "p2", "points": 7, "match_id": "m9"},
            {"player_id": "p1", "points": 11, "match_id": "m1", "board": "nope"},
        ]
    )

    assert response.status_code == 404
    assert response.json()["error"]["details"] == {"index": 1}
    assert MatchResult.objects.count() == 0


def test_repeats_inside_a_batch_count_once(post_scores, season):
    item = {"player_id": "p1", "points": 10, "match_id": "m1"}

    response = post_scores([item, item])

    assert [e["status"] for e in response.json()] == ["accepted", "duplicate"]
    assert [e["total_points"] for e in response.json()] == [10, 10]
    assert PlayerTotal.objects.get().points == 10


def test_different_points_for_one_match_inside_a_batch_conflict(post_scores, season):
    response = post_scores(
        [
            {"player_id": "p1", "points": 10, "match_id": "m1"},
            {"player_id": "p1", "points": 12, "match_id": "m1"},
        ]
    )

    assert response.status_code == 409
    assert response.json()["error"]["details"] == {"index": 1}
    assert MatchResult.objects.count() == 0


def test_a_batch_posted_again_is_all_duplicates(post_scores, season):
    body = [{"player_id": f"p{i}", "points": i + 1, "match_id": "m1"} for i in range(20)]
    post_scores(body)
    before = set(PlayerTotal.objects.values_list("player_id", "points", "updated_at"))

    again = post_scores(body)

    assert again.status_code == 200
    assert {e["status"] for e in again.json()} == {"duplicate"}
    assert set(PlayerTotal.objects.values_list("player_id", "points", "updated_at")) == before
    assert PendingStanding.objects.count() == 0


def test_an_empty_batch_is_rejected(post_scores, season):
    response = post_scores([])

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "empty_batch"


def test_a_batch_over_1000_items_is_rejected(post_scores, season):
    body = [{"player_id": f"p{i}", "points": 1, "match_id": "m"} for i in range(1001)]

    response = post_scores(body)

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "batch_too_large"
    assert MatchResult.objects.count() == 0


def test_a_batch_of_exactly_1000_items_is_accepted(post_scores, season):
    body = [{"player_id": f"p{i}", "points": 1, "match_id": "m"} for i in range(1000)]

    response = post_scores(body)

    assert response.status_code == 200
    assert len(response.json()) == 1000
    assert MatchResult.objects.count() == 1000
    assert store.board_size(season.id) == 1000
