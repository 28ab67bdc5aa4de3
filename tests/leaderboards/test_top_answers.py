"""The top pages' answers: reused by a process for a second, and shared between processes."""

import pytest

from leaderboards import store, top_answers

pytestmark = pytest.mark.django_db


def test_a_crawler_of_top_pages_cannot_grow_the_process_cache_past_its_size(
    client, post_scores, season, settings
):
    settings.LEADERBOARD_TOP_CACHE_SECONDS = 60
    settings.LEADERBOARD_TOP_CACHE_ENTRIES = 3
    post_scores({"player_id": "p1", "points": 10, "match_id": "m1"})

    for offset in range(6):
        assert client.get(f"/api/v1/leaderboard/top?offset={offset}").status_code == 200

    assert len(top_answers.top_pages_cache) == 3


def test_a_top_page_is_built_once_for_every_process_while_it_is_fresh(
    client, post_scores, season, settings
):
    settings.LEADERBOARD_TOP_CACHE_SECONDS = 60
    settings.LEADERBOARD_TOP_CACHE_ENTRIES = 3
    post_scores({"player_id": "p1", "points": 10, "match_id": "m1"})
    first = client.get("/api/v1/leaderboard/top")
    post_scores({"player_id": "p2", "points": 20, "match_id": "m1"})
    # Another process: nothing in its memory, the shared answer in Redis.
    top_answers.top_pages_cache.clear()
    second = client.get("/api/v1/leaderboard/top")
    key = store.top_answer_key(season.pk, offset=0, limit=10, rank_style="ordinal")

    assert first.content == second.content
    assert second.json()["total_players"] == 1
    assert store.shared_answer_get(key).etag == second["ETag"]
