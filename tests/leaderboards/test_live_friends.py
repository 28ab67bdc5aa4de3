"""A socket following a player's friends view: the view on joining, again when it changes,
and "X passed you" when a friend comes past the player."""

from __future__ import annotations

from typing import Any

import pytest
import redis.exceptions
from asgiref.sync import async_to_sync, sync_to_async

from leaderboards.live import friends as live_friends
from matches.services import friends_replace
from tests.leaderboards.test_live import WAIT, open_socket, scores  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


def _ranks(message: dict[str, Any]) -> list[tuple[int, int, str, int]]:
    return [(e["rank"], e["global_rank"], e["player_id"], e["points"]) for e in message["entries"]]


async def _next_of(communicator: Any, kind: str) -> dict[str, Any]:
    while True:
        message = await communicator.receive_json_from(timeout=WAIT)
        if message["type"] == kind:
            return message


def test_the_view_comes_after_the_snapshot_and_in_the_rest_shape(client, scores):  # noqa: F811
    scores(p1=300, p2=200, p3=100, stranger=250)
    friends_replace(player_id="p2", friend_ids=["p1", "p3", "new"])
    rest = client.get("/api/v1/leaderboard/players/p2/friends").json()

    async def scenario() -> list[dict[str, Any]]:
        communicator, snapshot = await open_socket("/ws/v1/leaderboard/global/?top=0&friends_of=p2")
        view = await communicator.receive_json_from(timeout=WAIT)
        await communicator.disconnect()
        return [snapshot, view]

    snapshot, view = async_to_sync(scenario)()

    assert snapshot["type"] == "snapshot"
    assert view["seq"] == 2
    assert view["type"] == "friends"
    assert {k: v for k, v in view.items() if k not in ("seq", "type")} == rest
    assert _ranks(view) == [(1, 1, "p1", 300), (2, 3, "p2", 200), (3, 4, "p3", 100)]
    assert view["unranked"] == ["new"]


def test_a_friend_who_passes_the_player_is_named_and_the_view_follows(scores):  # noqa: F811
    scores(p1=300, p2=200, p3=100)
    friends_replace(player_id="p2", friend_ids=["p1", "p3"])

    async def scenario() -> list[dict[str, Any]]:
        communicator, _ = await open_socket("/ws/v1/leaderboard/global/?top=0&friends_of=p2")
        await _next_of(communicator, "friends")
        # A stranger's result changes no friend's score: nothing for this socket.
        await sync_to_async(scores)(stranger=150)
        await sync_to_async(scores)(p3=150)  # p3: 250, past p2's 200
        passed = await _next_of(communicator, "friend_passed")
        view = await _next_of(communicator, "friends")
        await communicator.disconnect()
        return [passed, view]

    passed, view = async_to_sync(scenario)()

    assert {k: v for k, v in passed.items() if k != "seq"} == {
        "type": "friend_passed",
        "board": "global",
        "season": "s1",
        "player_id": "p2",
        "rank": 3,
        "global_rank": 3,
        "friend": {
            "rank": 2,
            "global_rank": 2,
            "player_id": "p3",
            "display_name": "p3",
            "avatar_url": "",
            "points": 250,
        },
    }
    assert _ranks(view) == [(1, 1, "p1", 300), (2, 2, "p3", 250), (3, 3, "p2", 200)]


def test_a_friend_who_climbs_without_passing_changes_the_view_only(scores):  # noqa: F811
    scores(p1=300, p2=200, p3=100)
    friends_replace(player_id="p2", friend_ids=["p1", "p3"])

    async def scenario() -> list[dict[str, Any]]:
        communicator, _ = await open_socket("/ws/v1/leaderboard/global/?top=0&friends_of=p2")
        await _next_of(communicator, "friends")
        await sync_to_async(scores)(p3=50)  # p3: 150, still behind p2
        view = await communicator.receive_json_from(timeout=WAIT)
        await sync_to_async(scores)(p2=1000)  # the player's own climb: no pass
        climbed = await communicator.receive_json_from(timeout=WAIT)
        await communicator.disconnect()
        return [view, climbed]

    view, climbed = async_to_sync(scenario)()

    assert view["type"] == "friends"
    assert _ranks(view) == [(1, 1, "p1", 300), (2, 2, "p2", 200), (3, 3, "p3", 150)]
    assert climbed["type"] == "friends"
    assert _ranks(climbed) == [(1, 1, "p2", 1200), (2, 2, "p1", 300), (3, 3, "p3", 150)]


@pytest.mark.parametrize(
    ("query", "close_code", "error_code"),
    [
        ("friends_of=ghost", 4404, "player_not_found"),
        ("friends_of=bad%20id", 4400, "validation_error"),
        ("friends_of=" + "x" * 65, 4400, "validation_error"),
    ],
)
def test_a_bad_friends_of_gets_an_error_then_a_close_code(season, query, close_code, error_code):
    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        communicator, error = await open_socket(f"/ws/v1/leaderboard/global/?{query}")
        closed = await communicator.receive_output(timeout=WAIT)
        await communicator.disconnect(timeout=WAIT)
        return error, closed

    error, closed = async_to_sync(scenario)()

    assert (error["type"], error["error"]["code"]) == ("error", error_code)
    assert closed == {"type": "websocket.close", "code": close_code}


def test_a_first_view_lost_to_a_redis_error_comes_at_the_next_tick(scores, monkeypatch):  # noqa: F811
    scores(p1=300, p2=200)
    friends_replace(player_id="p2", friend_ids=["p1"])
    failures = []
    read = live_friends.views_read

    def flaky(season, views):  # noqa: ANN001, ANN202
        if not failures:
            failures.append(views)
            raise redis.exceptions.ConnectionError("Redis went away for a moment")
        return read(season, views)

    # The ticker's read of the views fails once, as a Redis that went away for a moment would.
    monkeypatch.setattr(
        live_friends,
        "views_read_in_thread",
        sync_to_async(flaky, thread_sensitive=False),
    )

    async def scenario() -> dict[str, Any]:
        communicator, _ = await open_socket("/ws/v1/leaderboard/global/?top=0&friends_of=p2")
        view = await communicator.receive_json_from(timeout=WAIT)
        await communicator.disconnect()
        return view

    view = async_to_sync(scenario)()

    assert failures == [{"p2": ["p2", "p1"]}]
    assert view["type"] == "friends"
    assert _ranks(view) == [(1, 1, "p1", 300), (2, 2, "p2", 200)]
