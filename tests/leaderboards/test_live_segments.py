"""Sockets within a segment (`segment=country:DE`): the snapshot, the top and a followed player's
rank are the segment's, live, beside sockets of the whole board of the same season."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.layers import channel_layers

from tests.factories import BoardFactory, SeasonFactory
from tests.leaderboards.test_live import WAIT, open_socket, without_as_of


@pytest.fixture(autouse=True)
def _fresh_channel_layer() -> None:
    channel_layers.backends.clear()


@pytest.fixture
def ranked(server):
    board = BoardFactory(slug="ranked", segment_dimensions=["country"])
    SeasonFactory(board=board, slug="r1")

    def post(player_id: str, points: int, country: str | None = None) -> None:
        if country is not None:
            profile = {"segments": {"country": country}}
            assert server.put(
                f"/api/v1/players/{player_id}", profile, format="json"
            ).status_code in (
                200,
                201,
            )
        response = server.post(
            "/api/v1/scores",
            {
                "board": "ranked",
                "player_id": player_id,
                "points": points,
                "match_id": f"m-{player_id}-{points}",
            },
            format="json",
        )
        assert response.status_code == 201, response.json()

    return post


@pytest.mark.django_db(transaction=True)
def test_a_segment_socket_gets_the_segments_snapshot_top_and_passes(client, ranked):
    ranked("de1", 300, "DE")
    ranked("fr1", 250, "FR")
    ranked("de2", 200, "DE")
    rest_top = client.get("/api/v1/leaderboard/top?board=ranked&segment=country:DE").json()

    async def scenario() -> list[dict[str, Any]]:
        segment_socket, snapshot = await open_socket(
            "/ws/v1/leaderboard/ranked/?top=5&player_id=de2&segment=country:DE"
        )
        whole_socket, whole = await open_socket("/ws/v1/leaderboard/ranked/?top=5")
        # A French result changes the whole board only; a German one passes de2 in both.
        await sync_to_async(ranked)("fr2", 260, "FR")
        whole_after_fr = await whole_socket.receive_json_from(timeout=WAIT)
        quiet = await segment_socket.receive_nothing(timeout=0.5)
        await sync_to_async(ranked)("de3", 220, "DE")
        received = [await segment_socket.receive_json_from(timeout=WAIT) for _ in range(3)]
        await segment_socket.disconnect()
        await whole_socket.disconnect()
        return [snapshot, whole, whole_after_fr, quiet, *received]

    snapshot, whole, whole_after_fr, quiet, *received = async_to_sync(scenario)()

    snapshot = without_as_of(snapshot)
    assert (snapshot["segment"], snapshot["total_players"]) == ("country:DE", 2)
    assert snapshot["entries"] == rest_top["entries"]
    assert (snapshot["player"]["rank"], snapshot["player"]["segment"]) == (2, "country:DE")
    assert "segment" not in whole
    assert whole["total_players"] == 3
    assert [e["player_id"] for e in whole_after_fr["entries"]][:3] == ["de1", "fr2", "fr1"]
    assert quiet is True
    by_type = {message["type"]: message for message in received}
    assert [e["player_id"] for e in by_type["top"]["entries"]] == ["de1", "de3", "de2"]
    assert by_type["top"]["segment"] == "country:DE"
    assert (by_type["player"]["rank"], by_type["player"]["total_players"]) == (3, 3)
    # fr2 passed de2 on the whole board, not within Germany: only de3 overtook them there.
    assert {k: v for k, v in by_type["overtaken"].items() if k != "seq"} == {
        "type": "overtaken",
        "board": "ranked",
        "season": "r1",
        "segment": "country:DE",
        "player_id": "de2",
        "rank": 3,
        "by": [{"player_id": "de3", "display_name": "de3", "rank": 2, "points": 220}],
    }


@pytest.mark.django_db(transaction=True)
def test_a_segment_socket_with_an_unknown_dimension_gets_the_error_and_closes(ranked):
    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        unknown_socket, unknown = await open_socket("/ws/v1/leaderboard/ranked/?segment=galaxy:M31")
        bad_socket, bad = await open_socket("/ws/v1/leaderboard/ranked/?segment=country")
        for communicator in (unknown_socket, bad_socket):
            closed = await communicator.receive_output(timeout=WAIT)
            assert closed["type"] == "websocket.close"
        return unknown, bad

    unknown, bad = async_to_sync(scenario)()

    assert unknown["type"] == "error"
    assert unknown["error"]["code"] == "unknown_segment_dimension"
    assert bad["error"]["code"] == "invalid_segment"


@pytest.mark.django_db(transaction=True)
def test_a_socket_follows_a_clans_members_ranked_among_themselves(server, ranked):
    assert server.put("/api/v1/clans/red", {"name": "Red"}, format="json").status_code in (200, 201)
    for player_id in ("r1", "r2"):
        assert server.put(
            f"/api/v1/players/{player_id}", {"clan": "red"}, format="json"
        ).status_code in (200, 201)
    ranked("r1", 300)
    ranked("x1", 280)
    ranked("r2", 200)

    async def scenario() -> list[dict[str, Any]]:
        clan_socket, snapshot = await open_socket(
            "/ws/v1/leaderboard/ranked/?top=5&player_id=r2&segment=clan:red"
        )
        # r2 passes r1 within the clan: a new top and a climb, ranked within the clan.
        await sync_to_async(ranked)("r2", 150)
        received = [await clan_socket.receive_json_from(timeout=WAIT) for _ in range(3)]
        await clan_socket.disconnect()
        return [snapshot, *received]

    snapshot, *received = async_to_sync(scenario)()

    assert (snapshot["segment"], snapshot["total_players"]) == ("clan:red", 2)
    assert [e["player_id"] for e in snapshot["entries"]] == ["r1", "r2"]
    assert snapshot["player"]["rank"] == 2
    by_type = {message["type"]: message for message in received}
    assert [e["player_id"] for e in by_type["top"]["entries"]] == ["r2", "r1"]
    assert (by_type["player"]["rank"], by_type["player"]["segment"]) == (1, "clan:red")
    # Thresholds count within the segment: r2 is now first of their clan.
    assert (by_type["threshold"]["top"], by_type["threshold"]["entered"]) == (1, True)
    assert by_type["threshold"]["segment"] == "clan:red"


@pytest.mark.django_db(transaction=True)
def test_a_socket_follows_the_clan_board_and_hears_only_when_its_top_changes(server, ranked):
    for clan in ("red", "blue"):
        assert server.put(f"/api/v1/clans/{clan}", {"name": clan}, format="json").status_code in (
            200,
            201,
        )
    for player_id, clan in (("r1", "red"), ("r2", "red"), ("b1", "blue"), ("b2", "blue")):
        assert server.put(
            f"/api/v1/players/{player_id}", {"clan": clan}, format="json"
        ).status_code in (200, 201)
    ranked("r1", 300)
    ranked("r2", 200)
    ranked("b1", 280)

    async def scenario() -> list[Any]:
        clans_socket, snapshot = await open_socket("/ws/v1/leaderboard/ranked/?top=0&clans=5")
        first = await clans_socket.receive_json_from(timeout=WAIT)
        # A player in no clan moves no clan: nothing to tell.
        await sync_to_async(ranked)("loner", 900)
        quiet = await clans_socket.receive_nothing(timeout=0.6)
        await sync_to_async(ranked)("b2", 300)
        passed = await clans_socket.receive_json_from(timeout=WAIT)
        await clans_socket.disconnect()
        return [snapshot, first, quiet, passed]

    snapshot, first, quiet, passed = async_to_sync(scenario)()

    assert snapshot["type"] == "snapshot"
    assert (first["type"], first["seq"], first["total_clans"]) == ("clans", 2, 2)
    assert [(e["rank"], e["clan_id"], e["points"]) for e in first["entries"]] == [
        (1, "red", 500),
        (2, "blue", 280),
    ]
    assert quiet is True
    assert [(e["rank"], e["clan_id"], e["points"]) for e in passed["entries"]] == [
        (1, "blue", 580),
        (2, "red", 500),
    ]
