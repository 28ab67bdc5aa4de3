"""The readers' shared profile cache."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from leaderboards import selectors
from matches.services import player_upsert

pytestmark = pytest.mark.django_db


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
