"""The readers' caches: answers a process reuses for a second, and the shared profile cache."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from leaderboards import selectors, store
from matches.services import player_upsert

pytestmark = pytest.mark.django_db


def test_a_crawler_of_top_pages_cannot_grow_the_process_cache_past_its_size(
    client, post_scores, season, settings
):
    settings.LEADERBOARD_TOP_CACHE_SECONDS = 60
    settings.LEADERBOARD_TOP_CACHE_ENTRIES = 3
    post_scores({"player_id": "p1", "points": 10, "match_id": "m1"})

    for offset in range(6):
        assert client.get(f"/api/v1/leaderboard/top?offset={offset}").status_code == 200

    assert len(selectors.top_pages_cache) == 3


def test_a_top_page_is_built_once_for_every_process_while_it_is_fresh(
    client, post_scores, season, settings
):
    settings.LEADERBOARD_TOP_CACHE_SECONDS = 60
    settings.LEADERBOARD_TOP_CACHE_ENTRIES = 3
    post_scores({"player_id": "p1", "points": 10, "match_id": "m1"})
    first = client.get("/api/v1/leaderboard/top")
    post_scores({"player_id": "p2", "points": 20, "match_id": "m1"})
    # Another process: nothing in its memory, the shared answer in Redis.
    selectors.top_pages_cache.clear()
    second = client.get("/api/v1/leaderboard/top")
    key = store.top_answer_key(season.pk, offset=0, limit=10, rank_style="ordinal")

    assert first.content == second.content
    assert second.json()["total_players"] == 1
    assert store.shared_answer_get(key).etag == second["ETag"]


def test_a_reader_cannot_put_back_a_profile_forgotten_while_it_read(
    db, django_capture_on_commit_callbacks
):
    player_upsert(player_id="p1", display_name="Old name")
    renamed = False

    def rename_once_the_reader_has_read(execute, sql, params, many, context):  # noqa: ANN001
        # The reader's query has returned the old row; the rename commits (and forgets the
        # cached profile) before the reader fills the cache with what it read.
        nonlocal renamed
        result = execute(sql, params, many, context)
        if not renamed and 'FROM "matches_player"' in sql:
            renamed = True
            with django_capture_on_commit_callbacks(execute=True):
                player_upsert(player_id="p1", display_name="New name")
        return result

    with connection.execute_wrapper(rename_once_the_reader_has_read):
        slow_reader = selectors.profiles_get(["p1"])
    next_reader = selectors.profiles_get(["p1"])
    with CaptureQueriesContext(connection) as queries:
        cached = selectors.profiles_get(["p1"])

    assert renamed
    assert slow_reader == {"p1": ("Old name", "")}
    assert next_reader == {"p1": ("New name", "")}
    assert cached == {"p1": ("New name", "")}
    assert len(queries) == 0


def test_a_forgotten_profile_is_read_again(db, django_capture_on_commit_callbacks):
    player_upsert(player_id="p1", display_name="Old name")
    assert selectors.profiles_get(["p1", "unknown"]) == {
        "p1": ("Old name", ""),
        "unknown": ("", ""),
    }

    with django_capture_on_commit_callbacks(execute=True):
        player_upsert(player_id="p1", avatar_url="https://example.com/a.png")

    assert selectors.profiles_get(["p1", "unknown"]) == {
        "p1": ("Old name", "https://example.com/a.png"),
        "unknown": ("", ""),
    }
