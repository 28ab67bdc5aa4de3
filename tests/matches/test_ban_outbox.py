"""A ban's refresh of the live boards survives a lost task or a Redis away at commit: the ban,
the unban or the lifted temporary ban writes a PendingPlayerRefresh row in its own transaction,
and the row goes only once Redis holds the player's ban state as PostgreSQL has it now."""

import socket
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import timedelta

import pytest
import time_machine
from django.db import connection, transaction
from django.test import override_settings
from django.utils import timezone

from audit.models import OperatorAction
from config.building_blocks import redis as redis_roles
from leaderboards import store
from leaderboards.player_refreshes import player_refresh_owed_apply, season_bans_repair
from leaderboards.store import shard_of
from leaderboards.tasks import sweep_player_refreshes
from matches.models import PendingPlayerRefresh, Player
from matches.services import player_ban, player_unban
from matches.tasks import unban_expired_players
from tests.factories import BoardFactory, SeasonFactory

pytestmark = pytest.mark.django_db


def top(client) -> list[tuple[str, int]]:
    entries = client.get("/api/v1/leaderboard/top").json()["entries"]
    return [(e["player_id"], e["points"]) for e in entries]


def sweep() -> int:
    """What beat runs every few seconds."""
    return sweep_player_refreshes.delay().get()


@contextmanager
def redis_away() -> Iterator[None]:
    """The leaderboard's Redis refuses connections (a port bound but not listening)."""
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
        with override_settings(LEADERBOARD_REDIS_URL=f"redis://127.0.0.1:{port}/0"):
            redis_roles.connections_forget()
            try:
                yield
            finally:
                redis_roles.connections_forget()


def test_an_unban_whose_refresh_was_lost_is_repaired_by_the_sweep(
    client, post_scores, season, django_capture_on_commit_callbacks
):
    # given: a banned cheater
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})
    post_scores({"player_id": "fair", "points": 10, "match_id": "m1"})
    with django_capture_on_commit_callbacks(execute=True):
        player_ban(player_id="cheat", reason="aimbot")

    # when: the unban commits and its process dies before the refresh is sent
    with django_capture_on_commit_callbacks(execute=False) as lost:
        player_unban(player_id="cheat", reason="appeal won")
    after = post_scores({"player_id": "cheat", "points": 5, "match_id": "m2"})

    # then: Redis still holds the ban, so the new result counts but is dropped from the board
    stuck = (top(client), store.player_banned_in(season.pk, "cheat"))
    assert after.json()["total_points"] == 95
    assert stuck == ([("fair", 10)], True)

    # when: the sweep runs, twice, and the lost callback turns up late after all
    swept, again = sweep(), sweep()
    for callback in lost:
        callback()

    # then: the player is back exactly as PostgreSQL has them, once
    assert (len(lost), swept, again) == (1, 1, 0)
    assert top(client) == [("cheat", 95), ("fair", 10)]
    assert store.player_banned_in(season.pk, "cheat") is False
    assert not PendingPlayerRefresh.objects.exists()
    post_scores({"player_id": "cheat", "points": 1, "match_id": "m3"})
    assert top(client) == [("cheat", 96), ("fair", 10)]
    assert list(OperatorAction.objects.order_by("id").values_list("action", flat=True)) == [
        "ban",
        "unban",
    ]


def test_a_ban_whose_refresh_was_lost_is_applied_by_the_sweep(
    client, post_scores, season, django_capture_on_commit_callbacks
):
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})
    post_scores({"player_id": "fair", "points": 10, "match_id": "m1"})

    with django_capture_on_commit_callbacks(execute=False):
        player_ban(player_id="cheat", reason="aimbot")
    stuck = top(client)
    swept = sweep()

    assert stuck == [("cheat", 90), ("fair", 10)]
    assert swept == 1
    assert top(client) == [("fair", 10)]
    assert store.player_banned_in(season.pk, "cheat") is True
    assert not PendingPlayerRefresh.objects.exists()


def test_an_expired_ban_lifted_while_its_refresh_is_lost_is_repaired_by_the_sweep(
    client, post_scores, season, django_capture_on_commit_callbacks
):
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})
    start = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        player_ban(player_id="cheat", reason="smurfing", until=start + timedelta(minutes=30))

    with time_machine.travel(start + timedelta(minutes=31), tick=False):
        with django_capture_on_commit_callbacks(execute=False):
            lifted = unban_expired_players.delay().get()
        stuck = top(client)
        swept = sweep()

    assert (lifted, stuck, swept) == (1, [], 1)
    assert top(client) == [("cheat", 90)]
    assert not PendingPlayerRefresh.objects.exists()


def test_an_unban_while_redis_is_away_commits_and_is_refreshed_once_redis_is_back(
    client, post_scores, season, django_capture_on_commit_callbacks
):
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})
    with django_capture_on_commit_callbacks(execute=True):
        player_ban(player_id="cheat", reason="aimbot")

    # when: Redis refuses the on-commit refresh, and the sweep during the outage
    with redis_away():
        with django_capture_on_commit_callbacks(execute=True):
            player_unban(player_id="cheat", reason="appeal won")
        swept_while_away = sweep()

    # then: the unban is committed, its refresh still owed
    assert swept_while_away == 0
    assert list(PendingPlayerRefresh.objects.values_list("player_id", flat=True)) == ["cheat"]
    assert top(client) == []

    # when: Redis is back
    swept = sweep()

    assert swept == 1
    assert top(client) == [("cheat", 90)]
    assert not PendingPlayerRefresh.objects.exists()


def test_repeating_a_ban_whose_refresh_was_lost_applies_it(
    client, post_scores, season, django_capture_on_commit_callbacks
):
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})
    with django_capture_on_commit_callbacks(execute=False):
        player_ban(player_id="cheat", reason="aimbot")
    stuck = top(client)

    # when: the operator, seeing the cheater still on the board, bans them again
    with django_capture_on_commit_callbacks(execute=True):
        player_ban(player_id="cheat", reason="aimbot")

    assert stuck == [("cheat", 90)]
    assert top(client) == []
    assert not PendingPlayerRefresh.objects.exists()
    # Nothing changed in the ban itself: audited once.
    assert list(OperatorAction.objects.values_list("action", flat=True)) == ["ban"]


def test_changes_made_while_refreshes_are_lost_end_in_one_refresh_of_the_latest_state(
    client, post_scores, season, django_capture_on_commit_callbacks
):
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})
    with django_capture_on_commit_callbacks(execute=False):
        player_ban(player_id="cheat", reason="aimbot")
        player_unban(player_id="cheat", reason="wrong player")
        player_ban(player_id="cheat", reason="aimbot after all")
    owed = PendingPlayerRefresh.objects.count()
    banned = sweep()
    with django_capture_on_commit_callbacks(execute=False):
        player_unban(player_id="cheat", reason="appeal won")
    unbanned = sweep()

    assert (owed, banned, unbanned) == (1, 1, 1)
    assert top(client) == [("cheat", 90)]
    assert store.player_banned_in(season.pk, "cheat") is False


def test_a_close_repairs_the_bans_of_a_sharded_season_across_its_shards(post_scores, db):
    # given: a season of three shards whose banned sets disagree with PostgreSQL both ways
    season = SeasonFactory(board=BoardFactory(slug="global", shards=3), slug="s1")
    players = [f"p{i}" for i in range(9)]
    post_scores(
        [{"player_id": p, "points": 10 + i, "match_id": "m"} for i, p in enumerate(players)]
    )
    stale = {"p1", "p6", "p8"}
    for player_id in stale:
        store.players_ban({season.pk: 3}, player_id)
    Player.objects.filter(player_id__in=["p2", "p5"]).update(banned_at=timezone.now())

    repaired = season_bans_repair(season=season)

    assert repaired == 5
    assert len({shard_of(p, 3) for p in stale}) > 1  # the stale ones are spread over shards
    assert store.season_banned_players(season.pk, shards=3) == {"p2", "p5"}
    assert store.board_size(season.pk, shards=3) == 7
    assert not PendingPlayerRefresh.objects.exists()
    assert season_bans_repair(season=season) == 0


def _lock_waiters() -> int:
    with connection.cursor() as cursor:
        # Inside a transaction the statistics views are read once unless cleared.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0]


def _until_lock_waiters(count: int) -> None:
    deadline = time.monotonic() + 10
    while _lock_waiters() < count:
        assert time.monotonic() < deadline, f"fewer than {count} waiting for a lock"
        time.sleep(0.02)


@pytest.mark.django_db(transaction=True)
def test_an_unban_committing_while_an_older_refresh_runs_is_not_undone_by_it(client, post_scores):
    # given: a banned player whose boards still owe a refresh
    SeasonFactory(board=BoardFactory(slug="global"), slug="s1")
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})
    player_ban(player_id="cheat", reason="aimbot")
    PendingPlayerRefresh.objects.create(player_id="cheat", requested_at=timezone.now())

    def in_thread(work):
        def run():
            try:
                return work()
            finally:
                connection.close()

        return run

    # when: that refresh has read nothing yet (the totals are locked away from it) and an
    # unban commits meanwhile
    with ThreadPoolExecutor(2) as pool, transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("LOCK TABLE matches_playertotal IN ACCESS EXCLUSIVE MODE")
        refresh = pool.submit(in_thread(lambda: player_refresh_owed_apply(player_id="cheat")))
        _until_lock_waiters(1)
        unban = pool.submit(in_thread(lambda: player_unban(player_id="cheat", reason="appeal")))
        _until_lock_waiters(2)
    applied = refresh.result(timeout=10)
    unban.result(timeout=10)

    # then: the older refresh applied the ban it read, and the unban its own refresh after it
    assert applied is True
    assert top(client) == [("cheat", 90)]
    assert not PendingPlayerRefresh.objects.exists()
