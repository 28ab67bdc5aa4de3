"""A board page within one segment (`?segment=country:DE`): its own ranks, a picker of the
segments that hold players, live through the socket of that segment."""

from __future__ import annotations

import re

import pytest

from tests.factories import BoardFactory, SeasonFactory

pytestmark = pytest.mark.django_db

ROW = re.compile(r'<tr data-player-id="([^"]+)"')


@pytest.fixture
def ranked(server, django_capture_on_commit_callbacks):
    season = SeasonFactory(board=BoardFactory(slug="ranked", segment_dimensions=["country"]))
    for player, country, points in (("a", "DE", 30), ("b", "FR", 20), ("c", "DE", 10)):
        with django_capture_on_commit_callbacks(execute=True):
            server.put(
                f"/api/v1/players/{player}", {"segments": {"country": country}}, format="json"
            )
            posted = server.post(
                "/api/v1/scores",
                {
                    "board": "ranked",
                    "player_id": player,
                    "points": points,
                    "match_id": f"m-{player}",
                },
                format="json",
            )
        assert posted.status_code == 201
    return season


def test_the_board_page_shows_one_segment_live_with_a_picker(client, ranked):
    response = client.get("/boards/ranked/?segment=country:DE")

    html = response.content.decode()
    assert response.status_code == 200
    assert ROW.findall(html) == ["a", "c"]
    assert 'data-segment="country:DE"' in html
    assert 'data-live-top="100"' in html
    assert '<option value="country:DE" selected>country:DE</option>' in html
    assert '<option value="country:FR">country:FR</option>' in html
    assert '<input type="hidden" name="segment" value="country:DE">' in html


def test_the_whole_board_page_offers_the_segments(client, ranked):
    html = client.get("/boards/ranked/").content.decode()

    assert ROW.findall(html) == ["a", "b", "c"]
    assert 'id="segment-select"' in html
    assert "data-segment" not in html


def test_the_season_picker_keeps_the_segment(client, ranked):
    response = client.get(f"/boards/ranked/?season={ranked.slug}&segment=country:FR")

    assert response.status_code == 302
    assert response["Location"] == f"/boards/ranked/seasons/{ranked.slug}/?segment=country%3AFR"


def test_an_unknown_dimension_is_the_html_400_page(client, ranked):
    response = client.get("/boards/ranked/?segment=galaxy:M31")

    assert response.status_code == 400
    assert "galaxy" in response.content.decode()
