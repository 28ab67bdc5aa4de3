"""Finding players by name: `GET /api/v1/players?search=` finds a case-insensitive prefix of the
display name (or an exact id), the exact name first, then by rank, through the name index."""

import pytest
from django.db import connection
from django.db.models.functions import Lower

from leaderboards.search import _candidates
from matches.models import Player

pytestmark = pytest.mark.django_db

# player: (display name, points or None for no score this season)
PLAYERS = {
    "p1": ("Crimson Badger 104", 50),
    "p2": ("crimson bee", 80),
    "p3": ("Crimson", 10),
    "p4": ("Cobalt", 30),
    "p5": ("Crimson Unplayed", None),
}


@pytest.fixture
def named(server, post_scores, season):
    for player_id, (name, points) in PLAYERS.items():
        answer = server.put(f"/api/v1/players/{player_id}", {"display_name": name}, format="json")
        assert answer.status_code in (200, 201)
        if points is not None:
            posted = post_scores({"player_id": player_id, "points": points, "match_id": "m"})
            assert posted.status_code == 201


def _found(client, **query):
    params = "&".join(f"{k}={v}" for k, v in query.items())
    response = client.get(f"/api/v1/players?{params}")
    assert response.status_code == 200, response.content
    return response.json()


def test_a_prefix_of_any_case_finds_the_exact_name_first_then_by_rank(client, named, season):
    found = _found(client, search="cRiMsOn")

    assert (found["query"], found["board"], found["season"]) == ("cRiMsOn", "global", season.slug)
    assert [(p["player_id"], p["rank"], p["points"]) for p in found["players"]] == [
        ("p3", 4, 10),  # the name said exactly
        ("p2", 1, 80),
        ("p1", 2, 50),
        ("p5", None, None),  # no score this season: after the ranked ones
    ]
    assert found["players"][0]["display_name"] == "Crimson"
    assert found["next_offset"] is None


def test_a_longer_prefix_narrows_and_pages_follow_next_offset(client, named):
    first = _found(client, search="crimson%20b", limit=1)
    second = _found(client, search="crimson%20b", limit=1, offset=first["next_offset"])

    assert [p["player_id"] for p in first["players"]] == ["p2"]
    assert first["next_offset"] == 1
    assert [p["player_id"] for p in second["players"]] == ["p1"]
    assert second["next_offset"] is None


def test_an_exact_player_id_is_found_too(client, named):
    found = _found(client, search="p4")

    assert [(p["player_id"], p["display_name"]) for p in found["players"]] == [("p4", "Cobalt")]


@pytest.mark.parametrize("search", ["", "x" * 101, "tab%09in"])
def test_a_bad_search_is_a_400_that_says_what_is_wanted(client, named, search):
    response = client.get(f"/api/v1/players?search={search}")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "validation_error"
    assert "display name" in response.json()["error"]["message"]


def test_the_search_reads_the_name_index_not_the_table(named):
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        plan = (
            Player.objects.annotate(lowered_name=Lower("display_name"))
            .filter(lowered_name__startswith="crim")
            .exclude(display_name="")
            .explain()
        )

    assert "player_name_prefix" in plan
    assert [c[0] for c in _candidates("crim")] == ["p3", "p1", "p2", "p5"]
