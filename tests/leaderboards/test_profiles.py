"""The boards' profile directory: names and avatars in Redis without expiry, kept true by versions
(leaderboards/profiles.py, leaderboards/store/profiles.py)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from config.building_blocks import redis as redis_roles
from leaderboards import profiles, reconciliation, store
from leaderboards.store.profiles import bucket_key
from matches.models import Player
from matches.services import player_upsert

pytestmark = pytest.mark.django_db


def _no_queries(player_ids: list[str]) -> dict[str, tuple[str, str]]:
    with CaptureQueriesContext(connection) as queries:
        names = profiles.profiles_get(player_ids)
    assert len(queries) == 0
    return names


def test_a_reader_cannot_put_back_a_profile_changed_while_it_read(
    db, django_capture_on_commit_callbacks
):
    player_upsert(player_id="p1", display_name="Old name")
    renamed = False

    def rename_once_the_reader_has_read(execute, sql, params, many, context):  # noqa: ANN001
        # The reader's query has returned the old row; the rename commits (and files the new
        # profile) before the reader files what it read.
        nonlocal renamed
        result = execute(sql, params, many, context)
        if not renamed and "FROM matches_player " in sql.replace('"', ""):
            renamed = True
            with django_capture_on_commit_callbacks(execute=True):
                player_upsert(player_id="p1", display_name="New name")
        return result

    with connection.execute_wrapper(rename_once_the_reader_has_read):
        slow_reader = profiles.profiles_get(["p1"])

    assert renamed
    assert slow_reader == {"p1": ("Old name", "")}
    assert _no_queries(["p1"]) == {"p1": ("New name", "")}
    assert store.profiles_read(["p1"]) == {"p1": store.Profile(2, "New name", "")}


def test_a_changed_profile_is_filed_once_it_commits(db, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        player_upsert(player_id="p1", display_name="Old name")
    assert _no_queries(["p1"]) == {"p1": ("Old name", "")}

    with django_capture_on_commit_callbacks(execute=True):
        player_upsert(player_id="p1", avatar_url="https://example.com/a.png")

    assert _no_queries(["p1"]) == {"p1": ("Old name", "https://example.com/a.png")}
    assert Player.objects.get(player_id="p1").profile_changes == 1


def test_a_player_not_known_yet_is_filed_as_such_until_they_are(
    db, django_capture_on_commit_callbacks
):
    assert profiles.profiles_get(["unknown"]) == {"unknown": ("", "")}
    assert store.profiles_read(["unknown"]) == {"unknown": store.Profile(0, "", "")}
    assert _no_queries(["unknown"]) == {"unknown": ("", "")}

    with django_capture_on_commit_callbacks(execute=True):
        player_upsert(player_id="unknown", display_name="Now known")

    assert _no_queries(["unknown"]) == {"unknown": ("Now known", "")}


def test_an_id_that_names_two_players_reads_neither(db):
    # the players are read by a list of ids joined with commas: an id holding one is no list
    Player.objects.bulk_create([Player(player_id="p1", display_name="One"), Player(player_id="p2")])

    assert profiles.profiles_get(["p1,p2"]) == {"p1,p2": ("", "")}
    assert store.profiles_read(["p1", "p2"]) == {}
    assert profiles.profiles_get(["p1", "p1,p2"]) == {"p1": ("One", ""), "p1,p2": ("", "")}


def test_a_filing_that_failed_is_repaired_by_the_reconciliation_walk(
    season, post_scores, django_capture_on_commit_callbacks
):
    # given: p1 on the board and named in the directory; then renamed with the filing lost
    # (its on-commit work never runs here, as when Redis was away at that moment)
    with django_capture_on_commit_callbacks(execute=True):
        player_upsert(player_id="p1", display_name="Before")
    assert post_scores({"player_id": "p1", "points": 5, "match_id": "m1"}).status_code == 201
    player_upsert(player_id="p1", display_name="After")
    assert _no_queries(["p1"]) == {"p1": ("Before", "")}

    # when: reconciliation walks the season
    reconciliation.season_reconcile(season=season)

    # then: the directory holds the committed name, and a second walk files nothing
    assert _no_queries(["p1"]) == {"p1": ("After", "")}
    assert profiles.profiles_repair(["p1"]) == 0


def test_the_backfill_files_every_player_and_keeps_newer_entries(db):
    Player.objects.bulk_create(
        [Player(player_id=f"p{i:04d}", display_name=f"Player {i}") for i in range(2500)]
    )
    newer = store.Profile(9, "Renamed meanwhile", "")
    store.profiles_file({"p0007": newer})
    out = StringIO()

    call_command("profiles_backfill", stdout=out)

    assert out.getvalue().startswith("2500 players walked, 2499 profiles filed in ")
    names = _no_queries([f"p{i:04d}" for i in range(2500)])
    assert names["p0000"] == ("Player 0", "")
    assert names["p2499"] == ("Player 2499", "")
    assert names["p0007"] == ("Renamed meanwhile", "")
    assert len(names) == 2500


def test_entries_are_spread_over_compact_buckets(db):
    store.profiles_file({f"p{i}": store.Profile(1, f"Player {i}", "") for i in range(300)})

    keys = {bucket_key(f"p{i}") for i in range(300)}
    raw = store.client()
    assert len(keys) >= 290  # about one player a bucket at this size
    assert {raw.object("encoding", key) for key in keys} == {"listpack"}
    assert sum(raw.hlen(key) for key in keys) == 300


def test_the_directory_can_live_on_a_redis_cluster(db, redis_cluster, settings):
    settings.PROFILES_REDIS_URL = redis_cluster.url
    settings.PROFILES_REDIS_CLUSTER = True
    redis_roles.connections_forget()
    try:
        Player.objects.bulk_create(
            [Player(player_id=f"p{i}", display_name=f"Player {i}") for i in range(50)]
        )
        ids = [f"p{i}" for i in range(50)]

        assert profiles.profiles_get(ids) == {i: (f"Player {i[1:]}", "") for i in ids}
        assert _no_queries(ids) == {i: (f"Player {i[1:]}", "") for i in ids}
        assert store.delete_prefixed_keys() >= 50
        assert store.profiles_read(ids) == {}
    finally:
        store.delete_prefixed_keys()
        redis_roles.connections_forget()


def test_an_entry_reads_back_whole_whatever_its_name_holds(db):
    odd = store.Profile(3, "tab\x1fname", "https://img.example/a.png")
    store.profiles_file({"p1": odd, "p2": store.Profile(1, "", "")})

    assert store.profiles_read(["p1", "p2", "p3"]) == {"p1": odd, "p2": store.Profile(1, "", "")}


# Two ids whose entries share a bucket (CRC-32 of the id, 2^20 buckets).
SAME_BUCKET = ("p4887", "p40600")


@pytest.mark.parametrize("where", ["one-redis", "cluster"])
def test_entries_of_one_bucket_are_each_filed_by_their_own_version(db, request, settings, where):
    assert bucket_key(SAME_BUCKET[0]) == bucket_key(SAME_BUCKET[1])
    if where == "cluster":
        settings.PROFILES_REDIS_URL = request.getfixturevalue("redis_cluster").url
        settings.PROFILES_REDIS_CLUSTER = True
        redis_roles.connections_forget()
    try:
        first, second = SAME_BUCKET
        store.profiles_file({first: store.Profile(5, "Held", "")})
        others = {f"p{i}": store.Profile(1, f"Player {i}", "") for i in range(1200)}

        filed = store.profiles_file(
            {**others, first: store.Profile(4, "Older", ""), second: store.Profile(2, "New", "")}
        )

        assert filed == 1201
        assert store.profiles_read([first, second, "p0", "p1199"]) == {
            first: store.Profile(5, "Held", ""),
            second: store.Profile(2, "New", ""),
            "p0": store.Profile(1, "Player 0", ""),
            "p1199": store.Profile(1, "Player 1199", ""),
        }
    finally:
        store.delete_prefixed_keys()
        redis_roles.connections_forget()
