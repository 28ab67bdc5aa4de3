"""The friends view: a player and their friends ranked among themselves, with global ranks."""

import pytest

from leaderboards import closing
from matches.models import FRIENDS_MAX, Player
from matches.services import friends_replace, player_ban
from tests.factories import PlayerFactory

pytestmark = pytest.mark.django_db


def _view(client, player_id, query=""):
    return client.get(f"/api/v1/leaderboard/players/{player_id}/friends{query}")


def _ranks(body):
    return [(e["rank"], e["global_rank"], e["player_id"], e["points"]) for e in body["entries"]]


def test_friends_are_ranked_among_themselves_with_their_exact_global_ranks(client, board):
    # given: (board) p1 30, p2 20 reached at 10 s, p3 20 reached at 5 s, p4 10
    friends_replace(player_id="p2", friend_ids=["p4", "p3", "not-yet-played"])
    Player.objects.filter(player_id="p3").update(display_name="Cy", avatar_url="https://x/c.png")

    response = _view(client, "p2")

    # then: in the board's order, the tie to who reached 20 first; p1 is no friend
    assert response.status_code == 200
    body = response.json()
    assert (body["player_id"], body["board"], body["season"]) == ("p2", "global", "s1")
    assert body["total_players"] == 4
    assert _ranks(body) == [(1, 2, "p3", 20), (2, 3, "p2", 20), (3, 4, "p4", 10)]
    assert body["entries"][0]["display_name"] == "Cy"
    assert body["entries"][0]["avatar_url"] == "https://x/c.png"
    assert body["entries"][1]["display_name"] == "p2"
    assert body["unranked"] == ["not-yet-played"]


def test_competition_style_shares_ranks_within_the_list_and_globally(client, board):
    friends_replace(player_id="p4", friend_ids=["p2", "p3", "p1"])

    body = _view(client, "p4", "?rank_style=competition").json()

    assert _ranks(body) == [(1, 1, "p1", 30), (2, 2, "p3", 20), (2, 2, "p2", 20), (4, 4, "p4", 10)]


def test_a_player_without_a_score_or_a_list(client, board):
    PlayerFactory(player_id="lonely")
    friends_replace(player_id="watcher", friend_ids=["p1"])

    lonely = _view(client, "lonely").json()
    watcher = _view(client, "watcher").json()

    assert (lonely["entries"], lonely["unranked"]) == ([], ["lonely"])
    assert _ranks(watcher) == [(1, 1, "p1", 30)]
    assert watcher["unranked"] == ["watcher"]


def test_a_banned_friend_is_off_the_view(client, board, django_capture_on_commit_callbacks):
    friends_replace(player_id="p4", friend_ids=["p1", "p2"])
    with django_capture_on_commit_callbacks(execute=True):
        player_ban(player_id="p1", reason="cheating")

    body = _view(client, "p4").json()

    assert [e["player_id"] for e in body["entries"]] == ["p2", "p4"]
    assert body["unranked"] == ["p1"]


def test_a_closed_season_answers_the_same_from_its_archive(client, board):
    friends_replace(player_id="p2", friend_ids=["p4", "p3", "p1", "nobody"])
    live = _view(client, "p2", "?rank_style=competition").json()

    closing.season_close(season=board, force=True)
    closed = _view(client, "p2", "?season=s1&rank_style=competition").json()

    assert closed == live


def test_the_largest_list_is_answered_exactly(client, post_scores, season):
    friends = [f"f{i}" for i in range(FRIENDS_MAX)]
    # Every other friend played, each with their own points: f0 the most.
    body = [
        {"player_id": f, "points": 5000 - i, "match_id": f"m{i}"}
        for i, f in enumerate(friends)
        if i % 2 == 0
    ]
    assert post_scores(body).status_code == 200
    assert post_scores({"player_id": "me", "points": 4501, "match_id": "mine"}).status_code == 201
    friends_replace(player_id="me", friend_ids=friends)

    view = _view(client, "me").json()

    assert len(view["entries"]) == FRIENDS_MAX // 2 + 1
    assert len(view["unranked"]) == FRIENDS_MAX // 2
    me = next(e for e in view["entries"] if e["player_id"] == "me")
    # f0..f498 (every other one: 250 of them) have more than 4,501 points, f500 has 4,500: no
    # tie, so the rank does not hang on the second each result was reached in.
    assert (me["rank"], me["global_rank"]) == (251, 251)
    assert [e["rank"] for e in view["entries"]] == list(range(1, len(view["entries"]) + 1))


@pytest.mark.parametrize(
    ("path", "code", "status"),
    [
        ("/api/v1/leaderboard/players/ghost/friends", "player_not_found", 404),
        ("/api/v1/leaderboard/players/bad%20id/friends", "invalid_player_id", 400),
        ("/api/v1/leaderboard/players/p1/friends?rank_style=dense", "validation_error", 400),
        ("/api/v1/leaderboard/players/p1/friends?board=nope", "board_not_found", 404),
        ("/api/v1/leaderboard/players/p1/friends?season=s9", "season_not_found", 404),
    ],
)
def test_bad_reads_get_the_error_body(client, board, path, code, status):
    response = client.get(path)

    assert response.status_code == status
    assert response.json()["error"]["code"] == code


def test_a_renamed_friend_shows_under_the_new_name_at_once(
    client, server, board, django_capture_on_commit_callbacks
):
    friends_replace(player_id="p2", friend_ids=["p1"])
    assert _view(client, "p2").json()["entries"][0]["display_name"] == "p1"  # now cached

    with django_capture_on_commit_callbacks(execute=True):
        server.put("/api/v1/players/p1", {"display_name": "Ada"}, format="json")

    assert _view(client, "p2").json()["entries"][0]["display_name"] == "Ada"
