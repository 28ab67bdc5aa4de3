"""The clan pages: a board's clan board, and a clan with its members ranked within it."""

from __future__ import annotations

import re

import pytest

from tests.factories import BoardFactory, SeasonFactory

pytestmark = pytest.mark.django_db

CLAN_ROW = re.compile(r'<tr data-clan-id="([^"]+)"')
PLAYER_ROW = re.compile(r'<tr data-player-id="([^"]+)"')


@pytest.fixture
def clans(server, django_capture_on_commit_callbacks):
    season = SeasonFactory(board=BoardFactory(slug="arena"))
    for clan in ("red", "blue"):
        server.put(f"/api/v1/clans/{clan}", {"name": f"The {clan.title()}s"}, format="json")
    for player, clan, points in (("a", "red", 30), ("b", "blue", 20), ("c", "red", 10)):
        with django_capture_on_commit_callbacks(execute=True):
            server.put(f"/api/v1/players/{player}", {"clan": clan}, format="json")
            posted = server.post(
                "/api/v1/scores",
                {
                    "board": "arena",
                    "player_id": player,
                    "points": points,
                    "match_id": f"m-{player}",
                },
                format="json",
            )
        assert posted.status_code == 201
    return season


def test_the_clan_board_page_ranks_the_clans_and_links_each(client, clans):
    response = client.get("/boards/arena/clans/")

    html = response.content.decode()
    assert response.status_code == 200
    assert CLAN_ROW.findall(html) == ["red", "blue"]
    assert "The Reds" in html
    assert f'href="/boards/arena/clans/red/?season={clans.slug}"' in html
    assert 'href="/boards/arena/clans/' in client.get("/boards/arena/").content.decode()


def test_a_clan_page_ranks_its_members(client, clans):
    response = client.get("/boards/arena/clans/red/")

    html = response.content.decode()
    assert response.status_code == 200
    assert PLAYER_ROW.findall(html) == ["a", "c"]
    assert "#1 of 2 clans" in html


@pytest.mark.parametrize("clan_id", ["ghost", "bad%20id"])
def test_an_unknown_clan_is_the_html_404_page(client, clans, clan_id):
    response = client.get(f"/boards/arena/clans/{clan_id}/")

    assert response.status_code == 404


def test_the_board_page_within_a_clan_ranks_its_members_live(client, clans):
    response = client.get("/boards/arena/?segment=clan:red")

    html = response.content.decode()
    assert response.status_code == 200
    assert PLAYER_ROW.findall(html) == ["a", "c"]
    # The socket the page opens follows the clan's members (the page's live script reads this).
    assert 'data-segment="clan:red"' in html
