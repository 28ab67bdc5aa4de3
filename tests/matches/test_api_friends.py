"""Friends lists: game servers replace a player's whole list, everyone reads it."""

import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from rest_framework.test import APIClient

from matches.models import FRIENDS_MAX, FriendList, GameServer, Player
from tests.factories import BoardFactory, MatchResultFactory, PlayerFactory, SeasonFactory

pytestmark = pytest.mark.django_db


def _stored(player_id):
    return list(FriendList.objects.get(player_id=player_id).friend_ids)


def test_a_game_server_stores_a_list_and_anyone_reads_it_back(server, client):
    # when: a list with a friend who has never played, and an id given twice
    response = server.put(
        "/api/v1/players/p1/friends", {"friends": ["p2", "never-played", "p2"]}, format="json"
    )

    # then: stored in the order given, each id once, and echoed; the player exists now
    assert response.status_code == 200
    assert response.json() == {"player_id": "p1", "friends": ["p2", "never-played"]}
    assert _stored("p1") == ["p2", "never-played"]
    assert Player.objects.filter(player_id="p1").exists()
    read = client.get("/api/v1/players/p1/friends")
    assert read.status_code == 200
    assert read.json() == {"player_id": "p1", "friends": ["p2", "never-played"]}


def test_a_new_list_replaces_the_whole_old_one(server):
    server.put("/api/v1/players/p1/friends", {"friends": ["a", "b", "c"]}, format="json")

    response = server.put("/api/v1/players/p1/friends", {"friends": ["c", "d"]}, format="json")
    emptied = server.put("/api/v1/players/p2/friends", {"friends": []}, format="json")

    assert response.json()["friends"] == ["c", "d"]
    assert _stored("p1") == ["c", "d"]
    assert emptied.status_code == 200
    assert _stored("p2") == []


def test_a_player_without_a_list_has_no_friends_and_one_never_seen_is_404(client):
    PlayerFactory(player_id="p1")

    assert client.get("/api/v1/players/p1/friends").json() == {"player_id": "p1", "friends": []}
    unknown = client.get("/api/v1/players/ghost/friends")
    assert unknown.status_code == 404
    assert unknown.json()["error"]["code"] == "player_not_found"


def test_the_largest_list_is_kept_and_one_more_is_refused_writing_nothing(server):
    friends = [f"f{i}" for i in range(FRIENDS_MAX)]
    server.put("/api/v1/players/p1/friends", {"friends": ["old"]}, format="json")

    full = server.put("/api/v1/players/p1/friends", {"friends": friends}, format="json")
    over = server.put(
        "/api/v1/players/p1/friends", {"friends": [*friends, "one-more"]}, format="json"
    )
    new_player_over = server.put(
        "/api/v1/players/p2/friends", {"friends": [*friends, "one-more"]}, format="json"
    )

    assert full.status_code == 200
    assert len(full.json()["friends"]) == FRIENDS_MAX
    assert over.status_code == 400
    assert over.json()["error"]["code"] == "too_many_friends"
    assert over.json()["error"]["details"] == {"max_friends": FRIENDS_MAX, "friends": 1001}
    assert new_player_over.json()["error"]["code"] == "too_many_friends"
    assert _stored("p1") == friends
    assert not Player.objects.filter(player_id="p2").exists()


def test_the_players_own_id_is_refused(server):
    server.put("/api/v1/players/p1/friends", {"friends": ["p2"]}, format="json")

    response = server.put("/api/v1/players/p1/friends", {"friends": ["p3", "p1"]}, format="json")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "friend_is_self"
    assert response.json()["error"]["details"] == {"index": 1}
    assert _stored("p1") == ["p2"]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/v1/players/bad%20id/friends", {"friends": ["p2"]}),
        ("/api/v1/players/p1/friends", {"friends": ["bad id"]}),
        ("/api/v1/players/p1/friends", {"friends": [""]}),
        ("/api/v1/players/p1/friends", {"friends": ["x" * 65]}),
        ("/api/v1/players/p1/friends", {"friends": [5]}),
        ("/api/v1/players/p1/friends", {"friends": "p2"}),
        ("/api/v1/players/p1/friends", {"friends": None}),
        ("/api/v1/players/p1/friends", {}),
        ("/api/v1/players/p1/friends", {"friends": ["p2"], "extra": 1}),
        ("/api/v1/players/p1/friends", ["p2"]),
    ],
)
def test_bad_lists_are_refused_with_the_error_body_and_write_nothing(server, path, body):
    response = server.put(path, body, format="json")

    assert response.status_code == 400
    assert response.json()["error"]["code"] in ("validation_error", "invalid_player_id")
    assert response.json()["error"]["message"]
    assert FriendList.objects.count() == 0
    assert Player.objects.count() == 0


def test_writing_a_list_needs_a_game_server_key(client):
    response = client.put("/api/v1/players/p1/friends", {"friends": ["p2"]}, format="json")

    assert response.status_code in (401, 403)
    assert FriendList.objects.count() == 0


def test_a_key_limited_to_boards_writes_only_its_own_players_lists(season):
    other = SeasonFactory(board=BoardFactory(slug="ranked"), slug="r1")
    MatchResultFactory(season=other, board=other.board, player=PlayerFactory(player_id="p9"))
    MatchResultFactory(season=season, board=season.board, player=PlayerFactory(player_id="p1"))
    server, key = GameServer.objects.create_key(name="scoped")
    server.boards.add(season.board)
    scoped = APIClient()
    scoped.credentials(HTTP_AUTHORIZATION=f"Api-Key {key}")

    refused = scoped.put("/api/v1/players/p9/friends", {"friends": ["p1"]}, format="json")
    allowed = scoped.put("/api/v1/players/p1/friends", {"friends": ["p9"]}, format="json")

    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "player_not_in_scope"
    assert allowed.status_code == 200
    assert list(FriendList.objects.values_list("player_id", "friend_ids")) == [("p1", ["p9"])]


@pytest.mark.parametrize(
    "friend_ids",
    [["p1"], [f"f{i}" for i in range(FRIENDS_MAX + 1)], ["bad id"], ["a,b"]],
    ids=["self", "over-the-limit", "bad-id", "comma"],
)
def test_postgresql_keeps_the_rules_itself(friend_ids):
    player = PlayerFactory(player_id="p1")

    with pytest.raises(IntegrityError), transaction.atomic():
        FriendList.objects.create(player=player, friend_ids=friend_ids)


def test_the_admin_shows_a_players_friends(client, server):
    client.force_login(User.objects.create_superuser("operator", "op@example.com", "pw"))
    server.put("/api/v1/players/p1/friends", {"friends": ["p2", "p3"]}, format="json")
    PlayerFactory(player_id="p4")

    listed = client.get("/admin/matches/player/p1/change/").content.decode()
    empty = client.get("/admin/matches/player/p4/change/").content.decode()

    assert "2: p2, p3" in listed
    assert "Friends" in empty
    assert "2: p2, p3" not in empty
