"""Player profiles: game servers create and update them, everyone reads them."""

import pytest
from rest_framework.test import APIClient

from matches.models import Clan, GameServer, Player
from seasons.models import Board
from tests.factories import BoardFactory, MatchResultFactory, PlayerFactory, SeasonFactory

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
        # The pages load avatars over https only: an http one would show as a broken image.
        ("/api/v1/players/p1", {"avatar_url": "http://img.example/a.png"}),
        ("/api/v1/players/p1", {"display_name": 5}),
        ("/api/v1/players/p1", {"nickname": "x"}),
    ],
)
def test_bad_profiles_are_rejected(server, db, path, body):
    response = server.put(path, body, format="json")

    assert response.status_code == 400
    assert response.json()["error"]["code"] in ("validation_error", "invalid_player_id")
    assert Player.objects.count() == 0


def test_an_http_avatar_is_refused_with_the_reason(server, db):
    response = server.put(
        "/api/v1/players/p1", {"avatar_url": "http://img.example/a.png"}, format="json"
    )

    assert response.status_code == 400
    assert response.json()["error"]["details"]["fields"] == {
        "avatar_url": ["Enter an https:// address: the pages show no other avatars."]
    }
    assert Player.objects.count() == 0


AVATAR_REFUSED = "Enter an https:// address: the pages show no other avatars."


@pytest.mark.parametrize(
    "avatar_url",
    [
        # A host label over 63 characters: no DNS name, though a loose URI rule admits it.
        "https://" + "a" * 64 + ".example/a.png",
        "https://img.example/a b.png",
        "https://img.example/a.png#top",
        "https://user@img.example/a.png",
        "https://bücher.example/a.png",
        " https://img.example/a.png",
    ],
)
def test_an_avatar_off_the_schemas_pattern_is_refused_and_nothing_is_written(
    server, db, avatar_url
):
    response = server.put("/api/v1/players/p1", {"avatar_url": avatar_url}, format="json")

    assert response.status_code == 400
    assert response.json()["error"]["details"]["fields"] == {"avatar_url": [AVATAR_REFUSED]}
    assert Player.objects.count() == 0


@pytest.mark.parametrize(
    "avatar_url",
    [
        "https://" + "a" * 63 + ".example/a.png",
        "https://cdn.img.example:8443/p/a%20b.png?size=64&v=2",
        "https://xn--bcher-kva.example/a.png",
        "",
    ],
)
def test_an_avatar_the_schema_admits_is_stored_as_sent(server, db, avatar_url):
    response = server.put("/api/v1/players/p1", {"avatar_url": avatar_url}, format="json")

    assert response.status_code == 201
    assert Player.objects.get().avatar_url == avatar_url


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/api/v1/players/p1", {"display_name": "Ada\nLovelace"}, "display_name"),
        ("/api/v1/players/p1", {"display_name": "Ada\u0000"}, "display_name"),
        ("/api/v1/clans/red", {"name": "Red\tTeam"}, "name"),
    ],
)
def test_a_name_with_a_control_character_is_refused_and_nothing_is_written(
    server, db, path, body, field
):
    response = server.put(path, body, format="json")

    assert response.status_code == 400
    assert response.json()["error"]["details"]["fields"][field][0] == (
        "Use printable characters: no control characters or line separators."
    )
    assert Player.objects.count() == 0
    assert Clan.objects.count() == 0


def test_a_name_is_stored_as_sent(server, db):
    response = server.put("/api/v1/players/p1", {"display_name": " Ada "}, format="json")

    assert response.status_code == 201
    assert Player.objects.get().display_name == " Ada "


def test_profiles_need_a_game_server_key(client, db):
    response = client.put("/api/v1/players/p1", {"display_name": "x"}, format="json")

    assert response.status_code in (401, 403)
    assert Player.objects.count() == 0


def test_an_unknown_player_is_404(client, db):
    assert client.get("/api/v1/players/ghost").json()["error"]["code"] == "player_not_found"


def _scoped_client(*boards: Board) -> APIClient:
    server, key = GameServer.objects.create_key(name="scoped")
    server.boards.add(*boards)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Api-Key {key}")
    return api


def test_a_key_limited_to_boards_may_not_touch_players_of_other_boards(season):
    # given: a player who has played only on another board, and a key limited to `global`
    ranked = SeasonFactory(board=BoardFactory(slug="ranked"), slug="r1")
    MatchResultFactory(season=ranked, board=ranked.board, player=PlayerFactory(player_id="p9"))
    Player.objects.filter(player_id="p9").update(display_name="Nine", avatar_url="")
    scoped = _scoped_client(season.board)

    # when: it renames that player, and creates a profile nobody has played with yet
    renamed = scoped.put(
        "/api/v1/players/p9",
        {"display_name": "pwned", "avatar_url": "https://evil.example/x.png"},
        format="json",
    )
    created = scoped.put("/api/v1/players/newcomer", {"display_name": "x"}, format="json")

    # then: both refused with the error body, and nothing written
    assert renamed.status_code == 403
    assert renamed.json()["error"]["code"] == "player_not_in_scope"
    assert created.status_code == 403
    assert created.json()["error"]["code"] == "player_not_in_scope"
    assert list(Player.objects.values_list("player_id", "display_name", "avatar_url")) == [
        ("p9", "Nine", "")
    ]


def test_a_key_limited_to_boards_may_change_its_own_players(season):
    # given: a player with a result on the key's board (and one elsewhere)
    ranked = SeasonFactory(board=BoardFactory(slug="ranked"), slug="r1")
    player = PlayerFactory(player_id="p1")
    MatchResultFactory(season=season, board=season.board, player=player)
    MatchResultFactory(season=ranked, board=ranked.board, player=player, match_id="m2")
    scoped = _scoped_client(season.board)

    # when
    response = scoped.put("/api/v1/players/p1", {"display_name": "Ada"}, format="json")

    # then
    assert response.status_code == 200
    assert Player.objects.get(player_id="p1").display_name == "Ada"


def test_an_unscoped_key_still_creates_any_profile(server, db):
    response = server.put("/api/v1/players/newcomer", {"display_name": "New"}, format="json")

    assert response.status_code == 201
    assert Player.objects.get(player_id="newcomer").display_name == "New"


def test_an_operator_renaming_a_player_in_the_admin_shows_on_the_boards_at_once(
    admin_client, client, post_scores, season, django_capture_on_commit_callbacks
):
    # given: the player's name is on the board, and so in the boards' profile cache
    Player.objects.create(player_id="p1", display_name="Ada")
    post_scores({"player_id": "p1", "points": 5, "match_id": "m"})
    assert client.get("/api/v1/leaderboard/top").json()["entries"][0]["display_name"] == "Ada"

    # when: an operator changes the name and the avatar on the player's admin page
    with django_capture_on_commit_callbacks(execute=True):
        saved = admin_client.post(
            "/admin/matches/player/p1/change/",
            {"display_name": "Ada L.", "avatar_url": "https://img.example/ada.png"},
        )

    # then: the next read of the board shows them, not the cached copy
    assert saved.status_code == 302, saved.content[:2000]
    entry = client.get("/api/v1/leaderboard/top").json()["entries"][0]
    assert (entry["display_name"], entry["avatar_url"]) == (
        "Ada L.",
        "https://img.example/ada.png",
    )
