"""Hidden boards: a studio's board that players cannot find (lists, pages, API reads, the event
loop's reads, live sockets all answer as for an unknown board) while game servers post to it,
until an operator publishes it, audited."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User

from audit.models import OperatorAction, OperatorActionKind
from matches.models import PlayerTotal
from seasons.models import Board
from seasons.operator_actions import board_publish
from server.asgi import application
from tests.asgi import asgi_get
from tests.factories import BoardFactory, SeasonFactory

HIDDEN_READS = [
    "/api/v1/leaderboard/top?board=secret",
    "/api/v1/leaderboard/players/p1?board=secret",
    "/api/v1/leaderboard/players/p1/around?board=secret",
    "/api/v1/seasons?board=secret",
    "/api/v1/seasons/s1?board=secret",
    "/api/v1/seasons/s1/rewards?board=secret",
]


@pytest.fixture
def secret(post_scores, season) -> Board:
    """A hidden board with a running season, and p1's result on it (the public `global` board,
    from `season`, stands beside it)."""
    board = BoardFactory(slug="secret", name="Secret launch", hidden=True)
    SeasonFactory(board=board, slug="s1")
    response = post_scores({"player_id": "p1", "points": 40, "match_id": "m1", "board": "secret"})
    assert response.status_code == 201
    return board


@pytest.mark.django_db
def test_game_servers_post_to_a_hidden_board(secret):
    totals = PlayerTotal.objects.filter(season__board=secret)

    assert list(totals.values_list("player_id", "points")) == [("p1", 40)]


@pytest.mark.django_db
def test_a_hidden_board_is_not_in_the_public_board_list(client, secret):
    response = client.get("/api/v1/boards")

    assert [board["slug"] for board in response.json()] == ["global"]


@pytest.mark.django_db
@pytest.mark.parametrize("path", HIDDEN_READS)
def test_a_hidden_boards_reads_answer_as_for_an_unknown_board(client, secret, path):
    response = client.get(path)

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "board_not_found"
    assert response.json()["error"]["message"] == "Unknown board 'secret'."


@pytest.mark.django_db
def test_a_hidden_boards_seasons_are_not_in_the_players_history(client, secret):
    response = client.get("/api/v1/players/p1/seasons")

    assert response.status_code == 200
    assert response.json()["seasons"] == []


@pytest.mark.django_db
def test_a_hidden_board_has_no_public_page_and_no_link(client, secret):
    assert client.get("/boards/secret/").status_code == 404
    assert client.get("/boards/secret/seasons/s1/").status_code == 404
    home = client.get("/").content.decode()
    assert "/boards/global/" in home
    assert "secret" not in home.lower()
    player = client.get("/players/p1/").content.decode()
    assert "Secret launch" not in player


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/leaderboard/top?board=secret",
        "/api/v1/leaderboard/players/p1?board=secret",
        "/api/v1/leaderboard/players/p1/around?board=secret",
    ],
)
def test_the_event_loops_reads_of_a_hidden_board_answer_404_board_not_found(secret, path):
    response = asgi_get(application, path)

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "board_not_found"


@pytest.mark.django_db(transaction=True)
def test_a_live_socket_on_a_hidden_board_is_refused_as_an_unknown_board(secret):
    channel_layers.backends.clear()

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        communicator = WebsocketCommunicator(
            application,
            "/ws/v1/leaderboard/secret/",
            headers=[(b"origin", b"http://127.0.0.1")],
        )
        connected, _ = await communicator.connect(timeout=5)
        assert connected
        error = await communicator.receive_json_from(timeout=5)
        closed = await communicator.receive_output(timeout=5)
        await communicator.disconnect(timeout=5)
        return error, closed

    error, closed = async_to_sync(scenario)()

    assert error["error"]["code"] == "board_not_found"
    assert closed == {"type": "websocket.close", "code": 4404}


@pytest.mark.django_db
def test_publishing_a_board_shows_it_and_is_audited(client, secret):
    operator = User.objects.create_superuser("operator", "op@example.com", "pw")

    assert board_publish(board=secret, hidden=False, actor=operator) is True

    assert [b["slug"] for b in client.get("/api/v1/boards").json()] == ["global", "secret"]
    top = client.get("/api/v1/leaderboard/top?board=secret").json()
    assert [(e["player_id"], e["points"]) for e in top["entries"]] == [("p1", 40)]
    assert list(OperatorAction.objects.values_list("action", "actor_name", "board", "details")) == [
        (
            OperatorActionKind.BOARD_PUBLISH,
            "operator",
            "secret",
            {"hidden": {"from": True, "to": False}},
        )
    ]


@pytest.mark.django_db
def test_publishing_a_public_board_changes_and_records_nothing(season):
    assert board_publish(board=season.board, hidden=False, actor=None) is False

    assert OperatorAction.objects.count() == 0


@pytest.mark.django_db
def test_the_admin_publishes_after_asking(client, secret):
    client.force_login(User.objects.create_superuser("operator", "op@example.com", "pw"))
    form = {"action": "publish", "_selected_action": [str(secret.pk)]}

    asked = client.post("/admin/seasons/board/", form)

    assert asked.status_code == 200
    assert "Publish these boards?" in asked.content.decode()
    assert Board.objects.get(pk=secret.pk).hidden is True

    done = client.post("/admin/seasons/board/", {**form, "post": "yes"})

    assert done.status_code == 302
    assert Board.objects.get(pk=secret.pk).hidden is False
    assert OperatorAction.objects.get().action == OperatorActionKind.BOARD_PUBLISH


@pytest.mark.django_db
def test_a_board_is_created_hidden_from_the_admin_and_stays_so_on_its_form(client):
    client.force_login(User.objects.create_superuser("operator", "op@example.com", "pw"))
    form = {
        "slug": "launch",
        "name": "Launch",
        "hidden": "on",
        "score_operator": "sum",
        "sort_order": "highest_first",
        "max_points_per_result": "",
        "schedule": "none",
        "schedule_cron": "",
        "schedule_timezone": "UTC",
        "season_grace_period": "01:00:00",
        "keep_closed_standings_days": "7",
        "reward_tiers-TOTAL_FORMS": "0",
        "reward_tiers-INITIAL_FORMS": "0",
        "seasons-TOTAL_FORMS": "0",
        "seasons-INITIAL_FORMS": "0",
    }

    created = client.post("/admin/seasons/board/add/", form)

    assert created.status_code == 302
    board = Board.objects.get(slug="launch")
    assert board.hidden is True
    # On its change form, the field is shown but not posted: only Publish changes it.
    client.post(f"/admin/seasons/board/{board.pk}/change/", {**form, "hidden": ""})
    assert Board.objects.get(slug="launch").hidden is True


@pytest.mark.django_db(transaction=True)
def test_hiding_a_board_closes_its_open_sockets_and_no_others(post_scores, season):
    # given: a published board with a running season, a socket on it and one on `global`
    board = BoardFactory(slug="launch", name="Launch")
    SeasonFactory(board=board, slug="s1")
    post_scores({"player_id": "p1", "points": 40, "match_id": "m1", "board": "launch"})
    channel_layers.backends.clear()

    def socket(board_slug: str) -> WebsocketCommunicator:
        return WebsocketCommunicator(
            application,
            f"/ws/v1/leaderboard/{board_slug}/?player_id=p1",
            headers=[(b"origin", b"http://127.0.0.1")],
        )

    async def scenario() -> tuple[dict[str, Any], dict[str, Any], bool]:
        on_launch, on_global = socket("launch"), socket("global")
        for communicator in (on_launch, on_global):
            assert (await communicator.connect(timeout=5))[0]
            assert (await communicator.receive_json_from(timeout=5))["type"] == "snapshot"

        # when: an operator hides the board
        assert await sync_to_async(board_publish)(board=board, hidden=True, actor=None) is True

        # then: its socket is told and closed; the other board's socket hears nothing
        error = await on_launch.receive_json_from(timeout=5)
        closed = await on_launch.receive_output(timeout=5)
        global_quiet = await on_global.receive_nothing(timeout=0.5)
        await on_global.disconnect(timeout=5)
        return error, closed, global_quiet

    error, closed, global_quiet = async_to_sync(scenario)()

    assert error == {
        "seq": 2,
        "type": "error",
        "error": {
            "code": "board_not_found",
            "message": "Unknown board 'launch'.",
            "details": None,
        },
    }
    assert closed == {"type": "websocket.close", "code": 4404}
    assert global_quiet is True
