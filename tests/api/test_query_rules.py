"""Query values as the schema states them: an empty number or rank_style is refused with the
error body, by Django's views and by the event loop's reads alike; an empty board, season,
segment or player_id means "not given", as their patterns say."""

from __future__ import annotations

import pytest

from server.asgi import application
from tests.asgi import asgi_get
from tests.factories import BoardFactory, SeasonFactory

# The event loop reads seasons on threads of its own: the rows must be committed.
pytestmark = pytest.mark.django_db(transaction=True)

WHOLE_NUMBER = "Use a whole number from {} to {}."
RANK_STYLE = "Use one of: ordinal, competition."


@pytest.fixture
def season():
    return SeasonFactory(board=BoardFactory(slug="global"), slug="s1")


@pytest.mark.parametrize(
    ("path", "details"),
    [
        ("/api/v1/leaderboard/top?offset=", {"offset": [WHOLE_NUMBER.format(0, 2**31)]}),
        ("/api/v1/leaderboard/top?limit=", {"limit": [WHOLE_NUMBER.format(1, 100)]}),
        ("/api/v1/leaderboard/top?rank_style=", {"rank_style": [RANK_STYLE]}),
        ("/api/v1/leaderboard/players/p1?rank_style=", {"rank_style": [RANK_STYLE]}),
        ("/api/v1/leaderboard/players/p1/around?n=", {"n": [WHOLE_NUMBER.format(0, 50)]}),
        ("/api/v1/leaderboard/clans/top?offset=", {"offset": [WHOLE_NUMBER.format(0, 2**31)]}),
        ("/api/v1/players?search=a&limit=", {"limit": [WHOLE_NUMBER.format(1, 50)]}),
    ],
)
def test_an_empty_number_or_rank_style_is_refused_by_both_servers(client, season, path, details):
    from_django = client.get(path)
    from_loop = asgi_get(application, path)

    assert from_django.status_code == from_loop.status_code == 400
    assert from_django.json() == from_loop.json()
    assert from_django.json() == {
        "error": {
            "code": "validation_error",
            "message": "Invalid query parameters.",
            "details": details,
        }
    }


def test_an_empty_number_is_refused_by_the_rewards_page_too(client, season):
    response = client.get("/api/v1/seasons/s1/rewards?offset=")

    assert response.status_code == 400
    assert response.json() == {
        "error": {
            "code": "validation_error",
            "message": "Invalid query parameters.",
            "details": {"offset": ["A valid integer is required."]},
        }
    }


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/leaderboard/top?board=&season=&segment=",
        "/api/v1/seasons?board=",
        "/api/v1/seasons/s1?board=",
    ],
)
def test_an_empty_slug_or_segment_means_not_given(client, season, settings, path):
    # Top answers are shared for a minute, so both servers serve the same body.
    settings.LEADERBOARD_TOP_CACHE_SECONDS = 60
    from_django = client.get(path)
    from_loop = asgi_get(application, path)

    assert from_django.status_code == from_loop.status_code == 200
    assert from_django.json() == from_loop.json()


def test_a_search_is_refused_for_a_control_character_only(client, season):
    refused = client.get("/api/v1/players?search=a%01")
    # A no-break space is no control character: str.isprintable() refused it, the rule does not.
    accepted = client.get("/api/v1/players?search=a%C2%A0b")

    assert refused.status_code == 400
    assert refused.json()["error"]["message"] == (
        "search must be the start of a display name: 1-100 printable characters: no control "
        "characters or line separators."
    )
    assert accepted.status_code == 200
    assert accepted.json()["query"] == "a\u00a0b"
