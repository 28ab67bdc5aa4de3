"""Live pushes over WebSockets, through Channels' communicator: snapshot, changes, bad input."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator
from django.utils import timezone

from leaderboards import live, services, store
from leaderboards.live import outbox
from leaderboards.live import ticker as ticker_module
from matches.models import PlayerTotal
from seasons.models import Board, SeasonState
from server.asgi import application
from tests.factories import SeasonFactory

ORIGIN = (b"origin", b"http://127.0.0.1")
WAIT = 5  # seconds; a bound for a hung test, not a speed requirement


def socket(path: str, *, headers: list[tuple[bytes, bytes]] | None = None) -> Any:
    return WebsocketCommunicator(
        application, path, headers=[ORIGIN] if headers is None else headers
    )


async def open_socket(path: str) -> tuple[Any, dict[str, Any]]:
    """Connect and return the socket with its first message."""
    communicator = socket(path)
    connected, _ = await communicator.connect(timeout=WAIT)
    assert connected
    return communicator, await communicator.receive_json_from(timeout=WAIT)


def without_as_of(message: dict[str, Any]) -> dict[str, Any]:
    assert isinstance(message.pop("as_of"), str)
    return message


@pytest.fixture(autouse=True)
def _fresh_channel_layer() -> None:
    """Each test runs its own event loop; give it a channel layer of its own as well."""
    channel_layers.backends.clear()


@pytest.fixture
def scores(server, season):
    """Post results through the REST API (the eager mirror writes the ZSET and the notice)."""

    def post(**points: int) -> None:
        for player_id, value in points.items():
            response = server.post(
                "/api/v1/scores",
                {"player_id": player_id, "points": value, "match_id": f"m-{player_id}-{value}"},
                format="json",
            )
            assert response.status_code == 201, response.json()

    return post


@pytest.mark.django_db(transaction=True)
def test_snapshot_on_connect_has_the_top_and_the_player_in_the_rest_shapes(client, scores):
    scores(p1=300, p2=200, p3=100)
    rest_top = client.get("/api/v1/leaderboard/top?limit=2").json()
    rest_player = client.get("/api/v1/leaderboard/players/p2").json()
    rest_around = client.get("/api/v1/leaderboard/players/p2/around?n=1").json()

    async def scenario() -> dict[str, Any]:
        communicator, snapshot = await open_socket(
            "/ws/v1/leaderboard/global/?top=2&player_id=p2&n=1"
        )
        await communicator.disconnect()
        return snapshot

    snapshot = async_to_sync(scenario)()

    assert without_as_of(snapshot) == {
        "seq": 1,
        "type": "snapshot",
        "board": "global",
        "season": "s1",
        "total_players": 3,
        "entries": rest_top["entries"],
        "player": {**rest_player, "entries": rest_around["entries"]},
    }
    assert [e["player_id"] for e in snapshot["entries"]] == ["p1", "p2"]
    assert snapshot["player"]["rank"] == 2


@pytest.mark.django_db(transaction=True)
def test_snapshot_of_a_player_without_a_score_has_null_rank(scores):
    scores(p1=300)

    async def scenario() -> dict[str, Any]:
        communicator, snapshot = await open_socket("/ws/v1/leaderboard/global/?top=0&player_id=new")
        await communicator.disconnect()
        return snapshot

    snapshot = without_as_of(async_to_sync(scenario)())

    assert snapshot["entries"] == []
    assert snapshot["player"] == {
        "player_id": "new",
        "board": "global",
        "season": "s1",
        "rank": None,
        "points": None,
        "total_players": 1,
        "percentile": None,
        "entries": [],
    }


@pytest.mark.django_db(transaction=True)
def test_a_result_that_changes_the_top_is_pushed_with_the_next_seq(client, scores):
    scores(p1=300, p2=200)

    async def scenario() -> list[dict[str, Any]]:
        communicator, snapshot = await open_socket("/ws/v1/leaderboard/global/?top=3")
        await sync_to_async(scores)(p3=250)
        top = await communicator.receive_json_from(timeout=WAIT)
        await sync_to_async(scores)(p4=220)
        again = await communicator.receive_json_from(timeout=WAIT)
        await communicator.disconnect()
        return [snapshot, top, again]

    snapshot, top, again = async_to_sync(scenario)()

    assert (snapshot["seq"], top["seq"], again["seq"]) == (1, 2, 3)
    assert without_as_of(again) == {
        "seq": 3,
        "type": "top",
        "board": "global",
        "season": "s1",
        "total_players": 4,
        "entries": client.get("/api/v1/leaderboard/top?limit=3").json()["entries"],
    }
    assert [e["player_id"] for e in top["entries"]] == ["p1", "p3", "p2"]
    assert [e["player_id"] for e in again["entries"]] == ["p1", "p3", "p4"]


@pytest.mark.django_db(transaction=True)
def test_a_player_is_told_when_someone_passes_them_and_when_they_climb(scores):
    scores(p1=300, p2=200)

    async def scenario() -> list[dict[str, Any]]:
        communicator, _ = await open_socket("/ws/v1/leaderboard/global/?top=0&player_id=p2")
        await sync_to_async(scores)(p3=250)
        passed = await communicator.receive_json_from(timeout=WAIT)
        overtaken = await communicator.receive_json_from(timeout=WAIT)
        await sync_to_async(scores)(p2=500)
        climbed = await communicator.receive_json_from(timeout=WAIT)
        await communicator.disconnect()
        return [passed, overtaken, climbed]

    passed, overtaken, climbed = async_to_sync(scenario)()

    assert passed == {
        "seq": 2,
        "type": "player",
        "player_id": "p2",
        "board": "global",
        "season": "s1",
        "rank": 3,
        "points": 200,
        "total_players": 3,
        "percentile": 33.33,
    }
    # Who passed them comes right after the rank it changed (docs/websocket.md, "Rank events").
    assert overtaken == {
        "seq": 3,
        "type": "overtaken",
        "board": "global",
        "season": "s1",
        "player_id": "p2",
        "rank": 3,
        "by": [{"player_id": "p3", "display_name": "p3", "rank": 2, "points": 250}],
    }
    assert (climbed["seq"], climbed["rank"], climbed["points"]) == (4, 1, 700)


@pytest.mark.django_db(transaction=True)
def test_past_the_fan_out_being_passed_waits_its_turn_but_a_players_own_score_does_not(
    scores, settings
):
    settings.LIVE_FANOUT_PER_SECOND = 0.1  # one socket is ten seconds' worth of broadcasts
    scores(p1=300, p2=200)

    async def scenario() -> tuple[dict[str, Any], bool, dict[str, Any]]:
        communicator, _ = await open_socket("/ws/v1/leaderboard/global/?top=0&player_id=p2")
        await sync_to_async(scores)(p3=250)
        passed = await communicator.receive_json_from(timeout=WAIT)
        overtaken = await communicator.receive_json_from(timeout=WAIT)
        assert (overtaken["type"], overtaken["by"][0]["player_id"]) == ("overtaken", "p3")
        await sync_to_async(scores)(p4=260)
        held_back = await communicator.receive_nothing(timeout=1)
        await sync_to_async(scores)(p2=100)
        own = await communicator.receive_json_from(timeout=WAIT)
        await communicator.disconnect()
        return passed, held_back, own

    passed, held_back, own = async_to_sync(scenario)()

    assert (passed["seq"], passed["rank"], passed["points"]) == (2, 3, 200)
    assert held_back is True
    # p1 reached 300 first; the message carries the rank as it is now, p4's pass included
    assert (own["seq"], own["rank"], own["points"]) == (4, 2, 300)


@pytest.mark.django_db(transaction=True)
def test_past_the_fan_out_a_changed_top_waits_its_turn(scores, settings):
    settings.LIVE_FANOUT_PER_SECOND = 0.1
    scores(p1=300, p2=200)

    async def scenario() -> tuple[dict[str, Any], bool]:
        communicator, _ = await open_socket("/ws/v1/leaderboard/global/?top=2")
        await sync_to_async(scores)(p3=250)
        first = await communicator.receive_json_from(timeout=WAIT)
        await sync_to_async(scores)(p4=260)
        held_back = await communicator.receive_nothing(timeout=1)
        await communicator.disconnect()
        return first, held_back

    first, held_back = async_to_sync(scenario)()

    assert [e["player_id"] for e in first["entries"]] == ["p1", "p3"]
    assert held_back is True


@pytest.mark.django_db(transaction=True)
def test_past_the_fan_out_every_socket_gets_the_new_top_in_turn(scores, settings):
    settings.LIVE_FANOUT_PER_SECOND = 2  # two messages a second, one second's worth at once
    scores(p1=300)

    async def scenario() -> list[tuple[float, list[str]]]:
        sockets = [(await open_socket("/ws/v1/leaderboard/global/?top=1"))[0] for _ in range(4)]
        await sync_to_async(scores)(p2=500)
        arrivals = []
        for communicator in sockets:
            message = await communicator.receive_json_from(timeout=WAIT)
            arrivals.append((time.monotonic(), [e["player_id"] for e in message["entries"]]))
        for communicator in sockets:
            await communicator.disconnect()
        return arrivals

    arrivals = async_to_sync(scenario)()

    assert [entries for _, entries in arrivals] == [["p2"]] * 4
    # two at once from a full budget, the other two as it refills
    assert max(at for at, _ in arrivals) - min(at for at, _ in arrivals) > 0.5


@pytest.mark.django_db(transaction=True)
def test_a_passed_players_overtaken_is_paid_from_the_budget_like_their_rank(scores, settings):
    settings.LIVE_FANOUT_PER_SECOND = 2  # a second's worth: one passed player's two messages
    scores(p1=300, p2=200)

    async def scenario() -> list[list[tuple[float, str, list[str]]]]:
        sockets = [
            (await open_socket(f"/ws/v1/leaderboard/global/?top=0&player_id={player}"))[0]
            for player in ("p1", "p2")
        ]
        await sync_to_async(scores)(p3=500)  # passes both
        heard = []
        for communicator in sockets:
            mine: list[tuple[float, str, list[str]]] = []
            while not any(kind == "overtaken" for _, kind, _ in mine):
                message = await communicator.receive_json_from(timeout=WAIT)
                by = [entry["player_id"] for entry in message.get("by", [])]
                mine.append((time.monotonic(), message["type"], by))
            heard.append(mine)
        for communicator in sockets:
            await communicator.disconnect()
        return heard

    heard = async_to_sync(scenario)()

    for mine in heard:
        assert mine[0][1] == "player"
        assert ("overtaken", ["p3"]) in [(kind, by) for _, kind, by in mine]
    # The first player's messages (their rank, `overtaken`, and p1's `threshold`: out of the
    # top 1) spent the budget; the other's waited for it to refill.
    arrivals = [mine[0] for mine in heard]
    told = sorted(at for at, _, _ in arrivals)
    assert told[1] - told[0] > 0.5


@pytest.mark.django_db(transaction=True)
def test_a_result_behind_the_player_and_outside_the_top_sends_nothing(scores):
    scores(p1=300, p2=200)

    async def scenario() -> bool:
        communicator, _ = await open_socket("/ws/v1/leaderboard/global/?top=1&player_id=p1")
        await sync_to_async(scores)(p3=10)
        nothing = await communicator.receive_nothing(timeout=1)
        await communicator.disconnect()
        return nothing

    assert async_to_sync(scenario)() is True


@pytest.mark.django_db(transaction=True)
def test_a_rebuilt_season_is_pushed_like_a_mirrored_result(season, scores):
    scores(p1=300, p2=200)
    # The total changed in PostgreSQL long ago, so only the rebuild itself (not its catch-up
    # of recent totals) writes it to Redis and announces it.
    PlayerTotal.objects.filter(player_id="p2").update(
        points=400, updated_at=timezone.now() - timedelta(hours=1)
    )

    async def scenario() -> dict[str, Any]:
        communicator, _ = await open_socket("/ws/v1/leaderboard/global/?top=0&player_id=p2")
        await sync_to_async(services.season_rebuild_standings)(season=season)
        message = await communicator.receive_json_from(timeout=WAIT)
        await communicator.disconnect()
        return message

    message = async_to_sync(scenario)()

    assert (message["seq"], message["type"], message["rank"], message["points"]) == (
        2,
        "player",
        1,
        400,
    )


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("path", "close_code", "error_code"),
    [
        ("/ws/v1/leaderboard/nope/", 4404, "board_not_found"),
        ("/ws/v1/leaderboard/global/?season=s9", 4404, "season_not_found"),
        ("/ws/v1/leaderboard/global/?player_id=bad%20id", 4400, "validation_error"),
        ("/ws/v1/leaderboard/global/?player_id=" + "x" * 65, 4400, "validation_error"),
        ("/ws/v1/leaderboard/global/?top=101", 4400, "validation_error"),
        ("/ws/v1/leaderboard/global/?top=-1", 4400, "validation_error"),
        ("/ws/v1/leaderboard/global/?top=ten", 4400, "validation_error"),
        ("/ws/v1/leaderboard/global/?clans=101", 4400, "validation_error"),
        ("/ws/v1/leaderboard/global/?clans=-1", 4400, "validation_error"),
    ],
)
def test_bad_parameters_get_an_error_then_a_close_code(season, path, close_code, error_code):
    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        communicator, error = await open_socket(path)
        closed = await communicator.receive_output(timeout=WAIT)
        # Let the application finish inside this event loop: a consumer still pending when
        # async_to_sync closes its loop can hang the loop's shutdown.
        await communicator.disconnect(timeout=WAIT)
        return error, closed

    error, closed = async_to_sync(scenario)()

    assert (error["seq"], error["type"], error["error"]["code"]) == (1, "error", error_code)
    assert error["error"]["message"]
    assert closed == {"type": "websocket.close", "code": close_code}


@pytest.mark.django_db(transaction=True)
def test_bad_parameters_are_told_in_the_rest_shape_and_leave_the_next_socket_alone(scores):
    # given: one LiveQuery validates every socket's URL (consumers.LIVE_QUERY)
    scores(p1=300)

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        refused, error = await open_socket("/ws/v1/leaderboard/global/?top=101&n=-1")
        await refused.receive_output(timeout=WAIT)
        await refused.disconnect(timeout=WAIT)
        accepted, snapshot = await open_socket("/ws/v1/leaderboard/global/?top=1&player_id=p1")
        await accepted.disconnect()
        return error, snapshot

    error, snapshot = async_to_sync(scenario)()

    assert error["error"] == {
        "code": "validation_error",
        "message": "Invalid query parameters.",
        "details": {
            "top": ["Ensure this value is less than or equal to 100."],
            "n": ["Ensure this value is greater than or equal to 0."],
        },
    }
    assert snapshot["type"] == "snapshot"
    assert [entry["player_id"] for entry in snapshot["entries"]] == ["p1"]
    assert [entry["player_id"] for entry in snapshot["player"]["entries"]] == ["p1"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("headers", [[(b"origin", b"http://evil.example")], []])
def test_a_socket_opened_from_another_site_is_refused(season, headers):
    async def scenario() -> tuple[bool, Any]:
        communicator = socket("/ws/v1/leaderboard/global/", headers=headers)
        answer = await communicator.connect(timeout=WAIT)
        # As above: the refused consumer must finish in this loop, not at its shutdown.
        await communicator.disconnect(timeout=WAIT)
        return answer

    connected, _ = async_to_sync(scenario)()

    assert connected is False


@pytest.mark.django_db(transaction=True)
def test_season_closed_reaches_subscribers_then_closes_the_socket(season, scores):
    scores(p1=300)

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        communicator, _ = await open_socket("/ws/v1/leaderboard/global/?player_id=p1")
        await sync_to_async(live.season_closed)(season.pk, "s2")
        message = await communicator.receive_json_from(timeout=WAIT)
        closed = await communicator.receive_output(timeout=WAIT)
        return message, closed

    message, closed = async_to_sync(scenario)()

    assert message == {
        "seq": 2,
        "type": "season_closed",
        "board": "global",
        "season": "s1",
        "next_season": "s2",
    }
    assert closed == {"type": "websocket.close", "code": 4410}


@pytest.mark.django_db(transaction=True)
def test_connecting_to_a_closed_season_names_the_next_one(season):
    season.state = SeasonState.CLOSED
    season.save(update_fields=["state"])
    SeasonFactory(board=season.board, slug="s2", starts_at=season.ends_at)

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        communicator, message = await open_socket("/ws/v1/leaderboard/global/?season=s1")
        return message, await communicator.receive_output(timeout=WAIT)

    message, closed = async_to_sync(scenario)()

    assert message == {
        "seq": 1,
        "type": "season_closed",
        "board": "global",
        "season": "s1",
        "next_season": "s2",
    }
    assert closed == {"type": "websocket.close", "code": 4410}


@pytest.mark.django_db(transaction=True)
def test_a_socket_may_follow_more_players_up_to_the_limit(scores):
    scores(p1=300, p2=200)
    limit = live.MAX_PLAYERS_PER_CONNECTION

    async def scenario() -> list[dict[str, Any]]:
        communicator, _ = await open_socket("/ws/v1/leaderboard/global/?top=0&player_id=p1")
        await communicator.send_json_to({"action": "follow", "player_id": "p2"})
        followed = await communicator.receive_json_from(timeout=WAIT)
        for i in range(limit - 2):
            await communicator.send_json_to({"action": "follow", "player_id": f"f{i}"})
            await communicator.receive_json_from(timeout=WAIT)
        await communicator.send_json_to({"action": "follow", "player_id": "one-too-many"})
        refused = await communicator.receive_json_from(timeout=WAIT)
        await communicator.send_json_to({"action": "dance"})
        invalid = await communicator.receive_json_from(timeout=WAIT)
        await communicator.send_json_to({"action": "unfollow", "player_id": "p1"})
        await communicator.send_json_to({"action": "unfollow", "player_id": "f0"})
        await communicator.send_json_to({"action": "follow", "player_id": "p9"})
        followed_after_unfollow = await communicator.receive_json_from(timeout=WAIT)
        await sync_to_async(scores)(p3=1000)
        after_unfollow = await communicator.receive_json_from(timeout=WAIT)
        await communicator.disconnect()
        return [followed, refused, invalid, followed_after_unfollow, after_unfollow]

    followed, refused, invalid, room_again, after_unfollow = async_to_sync(scenario)()

    assert followed == {
        "seq": 2,
        "type": "player",
        "player_id": "p2",
        "board": "global",
        "season": "s1",
        "rank": 2,
        "points": 200,
        "total_players": 2,
        "percentile": 50.0,
    }
    assert refused["type"] == "error"
    assert refused["error"]["code"] == "too_many_subscriptions"
    assert invalid["error"]["code"] == "validation_error"
    assert (room_again["type"], room_again["player_id"], room_again["rank"]) == (
        "player",
        "p9",
        None,
    )
    # p1 was unfollowed, so only p2 (passed by p3) is reported.
    assert (after_unfollow["type"], after_unfollow["player_id"], after_unfollow["rank"]) == (
        "player",
        "p2",
        3,
    )


@pytest.mark.django_db(transaction=True)
def test_one_read_per_tick_serves_every_socket_of_the_process(scores, monkeypatch):
    players = [f"p{i}" for i in range(30)]
    scores(**{player_id: 100 + i for i, player_id in enumerate(players)})
    reads: list[int] = []
    read_batch = store.read_batch

    def counting_read_batch(season_id: int, **kwargs: Any) -> store.BatchRead:
        reads.append(len(kwargs["player_ids"]))
        return read_batch(season_id, **kwargs)

    monkeypatch.setattr(store, "read_batch", counting_read_batch)

    async def scenario() -> list[dict[str, Any]]:
        sockets = [
            (await open_socket(f"/ws/v1/leaderboard/global/?top=5&player_id={player_id}"))[0]
            for player_id in players
        ]
        reads.clear()
        await sync_to_async(scores)(leader=10_000)
        pushed = []
        for communicator in sockets:
            # Each socket's player (with its rank events), then the top.
            while not pushed or pushed[-1]["type"] != "top":
                pushed.append(await communicator.receive_json_from(timeout=WAIT))
            pushed.append({"type": "next socket"})
        for communicator in sockets:
            await communicator.disconnect()
        return pushed

    pushed = async_to_sync(scenario)()

    # One read: the 30 followed players and the one who passed them all, to name them.
    assert reads == [31]
    player_messages = sorted((m["player_id"], m["rank"]) for m in pushed if m["type"] == "player")
    assert player_messages == sorted((f"p{i}", 31 - i) for i in range(30))
    assert sum(1 for m in pushed if m["type"] == "top") == 30
    assert sum(1 for m in pushed if m["type"] == "overtaken") == 30


def test_an_unsent_message_is_replaced_by_a_newer_one_of_its_kind():
    sent: list[str] = []

    async def scenario() -> None:
        release = asyncio.Event()

        async def send(message: dict[str, Any]) -> None:
            await release.wait()
            sent.append(message["text"])

        subscriber = live.Subscriber(send)
        subscriber.push("top", '{"type":"top","v":1}')
        await asyncio.sleep(0)
        subscriber.push("top", '{"type":"top","v":2}')
        subscriber.push("player:p1", '{"type":"player","v":1}')
        subscriber.push("top", '{"type":"top","v":3}')
        release.set()
        for _ in range(10):
            await asyncio.sleep(0)

    asyncio.run(scenario())

    assert sent == [
        '{"seq":1,"type":"top","v":1}',
        '{"seq":2,"type":"top","v":3}',
        '{"seq":3,"type":"player","v":1}',
    ]


def test_a_client_that_stops_reading_is_closed_and_dropped(monkeypatch):
    monkeypatch.setattr(outbox, "SEND_TIMEOUT_SECONDS", 0.05)
    closed: list[int] = []
    dropped: list[live.Subscriber] = []

    async def scenario() -> live.Subscriber:
        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "websocket.close":
                closed.append(message["code"])
            else:
                await asyncio.Event().wait()

        subscriber = live.Subscriber(send)
        subscriber.on_drop = dropped.append
        subscriber.push("top", '{"type":"top"}')
        await asyncio.sleep(0.3)
        subscriber.push("top", '{"type":"top","late":true}')
        return subscriber

    subscriber = asyncio.run(scenario())

    assert closed == [live.CLOSE_SLOW_CLIENT]
    assert dropped == [subscriber]
    assert subscriber.open is False
    assert subscriber.seq == 1


@pytest.mark.django_db(transaction=True)
def test_one_address_may_open_only_so_many_sockets(scores, settings):
    # given: at most two sockets per client address
    scores(p1=300)
    settings.LIVE_SOCKETS_PER_ADDRESS = 2

    def from_address(address: str) -> Any:
        communicator = socket("/ws/v1/leaderboard/global/?top=1")
        communicator.scope["client"] = (address, 50000)
        return communicator

    async def first_message(communicator: Any) -> dict[str, Any]:
        connected, _ = await communicator.connect(timeout=WAIT)
        assert connected
        return await communicator.receive_json_from(timeout=WAIT)

    async def scenario() -> dict[str, Any]:
        first, second = from_address("198.51.100.4"), from_address("198.51.100.4")
        seen: dict[str, Any] = {
            "first": (await first_message(first))["type"],
            "second": (await first_message(second))["type"],
        }
        # when: the same address opens a third, and a fourth after the third was closed
        third = from_address("198.51.100.4")
        seen["third"] = await first_message(third)
        seen["third_closed"] = await third.receive_output(timeout=WAIT)
        await third.disconnect(timeout=WAIT)
        fourth = from_address("198.51.100.4")
        seen["fourth"] = (await first_message(fourth))["type"]
        await fourth.receive_output(timeout=WAIT)
        await fourth.disconnect(timeout=WAIT)
        # and another address opens one, and the first address closes one and opens one again
        other = from_address("203.0.113.9")
        seen["other"] = (await first_message(other))["type"]
        await first.disconnect(timeout=WAIT)
        again = from_address("198.51.100.4")
        seen["again"] = (await first_message(again))["type"]
        for communicator in (second, other, again):
            await communicator.disconnect(timeout=WAIT)
        return seen

    seen = async_to_sync(scenario)()

    # then: the third and fourth are told why and closed with 4429; the rest are served
    assert seen["third"] == {
        "seq": 1,
        "type": "error",
        "error": {
            "code": "too_many_sockets",
            "message": "This address has 2 live sockets open, the most allowed; close one first.",
            "details": {"limit": 2},
        },
    }
    assert seen["third_closed"] == {"type": "websocket.close", "code": 4429}
    assert (seen["first"], seen["second"], seen["fourth"], seen["other"], seen["again"]) == (
        "snapshot",
        "snapshot",
        "error",
        "snapshot",
        "snapshot",
    )


@pytest.mark.django_db(transaction=True)
def test_a_socket_that_missed_the_hide_is_closed_at_the_tickers_refresh(scores, monkeypatch):
    # given: a socket on `global`, and a ticker that refreshes often
    scores(p1=300)
    monkeypatch.setattr(ticker_module, "REFRESH_SECONDS", 0.2)

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        communicator, _ = await open_socket("/ws/v1/leaderboard/global/?top=1")
        # when: the board is hidden and no notice reaches the ticker
        await sync_to_async(Board.objects.filter(slug="global").update)(hidden=True)
        error = await communicator.receive_json_from(timeout=WAIT)
        closed = await communicator.receive_output(timeout=WAIT)
        await communicator.disconnect(timeout=WAIT)
        return error, closed

    error, closed = async_to_sync(scenario)()

    # then: its next refresh closes the socket as the notice would have
    assert (error["type"], error["error"]["code"]) == ("error", "board_not_found")
    assert closed == {"type": "websocket.close", "code": 4404}
