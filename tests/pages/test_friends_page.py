"""The friends view as a page: a board page with ?friends_of=, linked from the player page."""

from __future__ import annotations

import re

import pytest

from matches.services import friends_replace

from . import data

pytestmark = pytest.mark.django_db

ROW = re.compile(r'<tr data-player-id="([^"]+)"')


@pytest.fixture
def friends(scores):
    """p001 1,200 points, then 10 less per player down to p010; p005's friends are p002,
    p009 and one who has not played."""
    data.players(10)
    scores({data.player_id(n): 10 * (121 - n) for n in range(1, 11)})
    friends_replace(player_id="p005", friend_ids=["p009", "p002", "newcomer"])


def test_the_board_page_shows_a_players_friends_ranked_among_themselves_live(client, friends):
    response = client.get("/boards/global/?friends_of=p005")

    html = response.content.decode()
    assert response.status_code == 200
    assert ROW.findall(html) == ["p002", "p005", "p009"]
    assert '<tr data-player-id="p005" class="me" aria-current="true">' in html
    assert '<td class="rank" data-value="2">2</td>' in html
    assert '<td class="global-rank" data-value="5">#5</td>' in html
    assert '<th scope="col" class="global-rank">Global rank</th>' in html
    assert "No score yet: newcomer" in html
    assert 'data-live-friends="p005"' in html
    assert "data-live-top" not in html
    assert '<input type="hidden" name="friends_of" value="p005">' in html


def test_the_player_page_links_to_the_friends_view(client, friends):
    html = client.get("/players/p005/").content.decode()

    assert 'href="/boards/global/seasons/' in html
    assert re.search(r'href="/boards/global/seasons/[^"/]+/\?friends_of=p005"', html)


def test_the_season_picker_keeps_the_friends_view(client, friends, season):
    response = client.get(f"/boards/global/?season={season.slug}&friends_of=p005")

    assert response.status_code == 302
    assert response["Location"] == f"/boards/global/seasons/{season.slug}/?friends_of=p005"


@pytest.mark.parametrize("player_id", ["ghost", "bad%20id"])
def test_an_unknown_player_is_the_html_404_page(client, friends, player_id):
    response = client.get(f"/boards/global/?friends_of={player_id}")

    assert response.status_code == 404
    assert "<h1>Page not found</h1>" in response.content.decode()
