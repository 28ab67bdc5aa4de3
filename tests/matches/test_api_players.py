"""Player profiles: game servers create and update them, everyone reads them."""

import pytest

from matches.models import Player

pytestmark = pytest.mark.django_db


def test_a_game_server_creates_then_updates_a_profile(
    server, client, post_scores, season, django_capture_on_commit_callbacks
):
    created = server.put(
        "/api/v1/players/p1",
        {"display_name": "Ada", "avatar_url": "https://img.example/a.png"},
        format="json",
    )
    post_scores({"player_id": "p1", "points": 5, "match_id": "m"})
    client.get("/api/v1/leaderboard/top")  # warms the profile cache
    with django_capture_on_commit_callbacks(execute=True):
        updated = server.put("/api/v1/players/p1", {"display_name": "Ada L."}, format="json")

    assert created.status_code == 201
    assert created.json() == {
        "player_id": "p1",
        "display_name": "Ada",
        "avatar_url": "https://img.example/a.png",
    }
    assert updated.status_code == 200
    assert updated.json()["avatar_url"] == "https://img.example/a.png"
    assert client.get("/api/v1/players/p1").json()["display_name"] == "Ada L."
    top = client.get("/api/v1/leaderboard/top").json()["entries"]
    assert top[0]["display_name"] == "Ada L."


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/v1/players/bad%20id", {"display_name": "x"}),
        ("/api/v1/players/p1", {"display_name": "x" * 101}),
        ("/api/v1/players/p1", {"avatar_url": "not a url"}),
        ("/api/v1/players/p1", {"display_name": 5}),
        ("/api/v1/players/p1", {"nickname": "x"}),
    ],
)
def test_bad_profiles_are_rejected(server, db, path, body):
    response = server.put(path, body, format="json")

    assert response.status_code == 400
    assert response.json()["error"]["code"] in ("validation_error", "invalid_player_id")
    assert Player.objects.count() == 0


def test_profiles_need_a_game_server_key(client, db):
    response = client.put("/api/v1/players/p1", {"display_name": "x"}, format="json")

    assert response.status_code in (401, 403)
    assert Player.objects.count() == 0


def test_an_unknown_player_is_404(client, db):
    assert client.get("/api/v1/players/ghost").json()["error"]["code"] == "player_not_found"
