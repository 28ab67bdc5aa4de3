"""The pages as HTML, through Django's test client: what each page shows, its 404s and 500."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
import redis.exceptions
from django.test import Client, RequestFactory
from django.utils import timezone

from config.building_blocks.errors import json_server_error
from leaderboards import store
from pages import selectors as page_selectors
from pages.models import RankSample

from . import data

pytestmark = pytest.mark.django_db

ROW = re.compile(r'<tr data-player-id="([^"]+)"')


@pytest.fixture
def board_of_120(scores):
    """p001 leads with 1,200 points, then 10 points less per player down to p120."""
    data.players(120)
    scores({data.player_id(n): 10 * (121 - n) for n in range(1, 121)})


def rows(response) -> list[str]:
    return ROW.findall(response.content.decode())


def test_home_shows_the_running_seasons_top_100_live(client, board_of_120):
    response = client.get("/")

    html = response.content.decode()
    assert response.status_code == 200
    assert response["Content-Type"] == "text/html; charset=utf-8"
    assert rows(response) == [data.player_id(n) for n in range(1, 101)]
    assert response.context["top"]["entries"][0] == {
        "rank": 1,
        "player_id": "p001",
        "display_name": "Ada Lovelace",
        "avatar_url": "",
        "points": 1200,
    }
    assert '<td class="rank" data-value="1">1</td>' in html
    assert '<td class="points" data-value="1200">1,200</td>' in html
    assert '<span class="name">Ada Lovelace</span>' in html
    assert '<a href="/players/p001/">' in html
    assert '<h1 id="board-heading">Global <span class="subtitle">Season 12</span></h1>' in html
    assert "28 days 23 hours</time> left" in html
    assert "<span data-total-players>120</span> players" in html
    assert 'data-live-top="100"' in html
    assert '<form class="lookup" method="get" action="/players/" role="search">' in html
    assert '<label for="lookup-player-id">Find a player</label>' in html
    assert '<th scope="col" class="rank">Rank</th>' in html
    assert "Page 1 of 2" in html


def test_the_next_page_lists_ranks_101_and_below_and_is_refreshed_by_polling(client, board_of_120):
    response = client.get("/boards/global/?page=2")

    html = response.content.decode()
    assert response.status_code == 200
    assert rows(response) == [data.player_id(n) for n in range(101, 121)]
    assert response.context["top"]["entries"][0]["rank"] == 101
    assert "Page 2 of 2" in html
    assert '<a href="?page=1" rel="prev">' in html
    assert 'data-poll-offset="100"' in html
    assert "data-live-top" not in html


@pytest.mark.parametrize("page", ["3", "0", "-1", "two", "99999999999", "²"])
def test_a_page_past_the_end_or_not_a_page_is_404(client, board_of_120, page):
    response = client.get(f"/?page={page}")

    assert response.status_code == 404
    assert "Page not found" in response.content.decode()


def test_an_empty_season_has_one_page_saying_so(client, season):
    response = client.get("/")

    html = response.content.decode()
    assert response.status_code == 200
    assert rows(response) == []
    assert '<p class="empty" data-empty>No scores yet this season.</p>' in html
    assert "Page 1 of" not in html


def test_a_closed_season_is_read_from_its_archive_and_not_live(client, board, season, scores):
    data.players(3)
    data.closed_season(
        board, [("p002", 900), ("p001", 800), ("p003", 10)], rewards={"p002": "gold-cup"}
    )
    scores({"p001": 5})

    response = client.get("/boards/global/seasons/s11/")

    html = response.content.decode()
    assert response.status_code == 200
    assert rows(response) == ["p002", "p001", "p003"]
    assert response.context["top"]["entries"][0]["points"] == 900
    assert '<span class="badge badge-closed">Closed</span>' in html
    assert "data-live-top" not in html and "data-live-status" not in html
    assert "final standings" in html
    options = re.findall(r'<option value="([^"]+)"( selected)?>', html)
    assert options == [("s12", ""), ("s11", " selected")]
    # What each player won, beside their rank; the running season's page has no such column.
    assert re.findall(r'<td class="reward">([^<]+)</td>', html) == ["gold-cup", "–", "–"]
    assert 'class="reward"' not in client.get("/boards/global/").content.decode()


def test_the_season_picker_form_goes_to_the_seasons_address(client, board, season):
    data.closed_season(board, [], rewards={})

    response = client.get("/boards/global/?season=s11")

    assert response.status_code == 302
    assert response["Location"] == "/boards/global/seasons/s11/"


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/boards/nope/", "Unknown board &#x27;nope&#x27;."),
        ("/boards/global/seasons/s99/", "Board &#x27;global&#x27; has no season &#x27;s99&#x27;."),
        ("/boards/global/?season=bad%20slug", "There is no such page."),
        ("/players/ghost/", "There is no player &#x27;ghost&#x27;."),
        ("/players/bad%20id/", "There is no player &#x27;bad id&#x27;."),
        ("/no/such/page/", "There is nothing at this address."),
    ],
)
def test_unknown_boards_seasons_and_players_get_the_html_404_page(client, season, path, message):
    response = client.get(path)

    html = response.content.decode()
    assert response.status_code == 404
    assert response["Content-Type"] == "text/html; charset=utf-8"
    assert "<h1>Page not found</h1>" in html
    assert f"<p>{message}</p>" in html


def test_api_paths_keep_the_json_error_body(client, season):
    response = client.get("/api/v1/no-such-endpoint")

    assert response.status_code == 404
    assert response.json() == {
        "error": {"code": "not_found", "message": "Not found.", "details": None}
    }


def test_a_server_error_is_a_plain_page_without_traceback(season, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("secret internals")

    monkeypatch.setattr(page_selectors, "board_page", broken)

    response = Client(raise_request_exception=False).get("/")

    html = response.content.decode()
    assert response.status_code == 500
    assert "<h1>Something went wrong</h1>" in html
    assert "secret internals" not in html and "Traceback" not in html


def test_a_server_error_under_the_api_is_the_json_error_body():
    response = json_server_error(RequestFactory().get("/api/v1/anything"))

    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"


def test_pages_say_unavailable_with_503_while_redis_is_down(client, season, monkeypatch):
    def down(*args, **kwargs):
        raise redis.exceptions.ConnectionError("Redis is down")

    monkeypatch.setattr(store, "read_page", down)

    response = client.get("/")

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert "<h1>Temporarily unavailable</h1>" in response.content.decode()


def test_pages_only_answer_get_and_head(client, season):
    assert client.head("/").status_code == 200
    assert client.post("/").status_code == 405


def test_the_lookup_form_leads_to_the_players_page(client, season):
    assert client.get("/players/?player_id=p007")["Location"] == "/players/p007/"
    assert client.get("/players/?player_id=")["Location"] == "/"


@pytest.fixture
def player_with_a_past(board, season, scores):
    """p015 ranks 15th of 30 now, was 3rd of 4 last season, and climbed from #40 over a day."""
    data.players(30)
    scores({data.player_id(n): 10 * (31 - n) for n in range(1, 31)})
    data.closed_season(
        board,
        [("p001", 900), ("p002", 800), ("p015", 700), ("p004", 10)],
        rewards={"p001": "gold-cup", "p015": "bronze-badge"},
    )
    now = timezone.now()
    RankSample.objects.bulk_create(
        RankSample(
            season=season,
            player_id="p015",
            rank=rank,
            points=rank,
            sampled_at=now - timedelta(hours=hours),
        )
        for hours, rank in [(20, 40), (12, 31), (6, 22), (1, 16)]
    )


def test_the_player_page_shows_rank_around_me_history_and_chart(client, player_with_a_past):
    response = client.get("/players/p015/")

    html = response.content.decode()
    assert response.status_code == 200
    (standing,) = response.context["standings"]
    assert standing.standing == {
        "player_id": "p015",
        "board": "global",
        "season": "s12",
        "rank": 15,
        "points": 160,
        "total_players": 30,
        "percentile": 53.33,
    }
    assert [e["player_id"] for e in standing.around] == [data.player_id(n) for n in range(10, 21)]
    assert '<span data-stat="rank" aria-live="polite">#15</span>' in html
    assert '<dd data-stat="percentile">53.33</dd>' in html
    assert 'data-live-player="p015"' in html
    assert '<tr data-player-id="p015" class="me" aria-current="true">' in html
    assert [
        (h["season"], h["final_rank"], h["points"], h["reward"])
        for h in response.context["history"]
    ] == [("s11", 3, 700, "bronze-badge")]
    assert '#3 <span class="muted">of 4</span>' in html
    assert "<td>bronze-badge</td>" in html
    assert [p.rank for p in standing.chart.points] == [40, 31, 22, 16, 15]
    assert '<polyline class="line" points="' in html
    assert "to #15 now; best #15, lowest #40." in html


def test_a_player_without_a_running_score_still_has_a_page(client, season):
    data.players(1)

    response = client.get("/players/p001/")

    html = response.content.decode()
    assert response.status_code == 200
    assert "Ada Lovelace has no score in a running season." in html
    assert "No closed seasons yet." in html


def test_pages_carry_a_strict_content_security_policy_and_the_api_none(client, season):
    page = client.get("/")
    api = client.get("/api/v1/boards")
    admin = client.get("/admin/login/")

    assert sorted(page["Content-Security-Policy"].split("; ")) == data.STRICT_POLICY
    assert "Content-Security-Policy" not in api
    assert "Content-Security-Policy" not in admin


def test_the_lookup_box_takes_a_name_and_lists_the_players_it_may_mean(client, server, scores):
    for player_id, name in (("p1", "Crimson Badger"), ("p2", "crimson bee"), ("p3", "Cobalt")):
        answer = server.put(f"/api/v1/players/{player_id}", {"display_name": name}, format="json")
        assert answer.status_code in (200, 201)
    scores({"p1": 10, "p2": 20, "p3": 30})

    several = client.get("/players/?player_id=Crim")
    one = client.get("/players/?player_id=cob")
    exact_id = client.get("/players/?player_id=p2")
    nobody = client.get("/players/?player_id=Nobody+Here")

    html = several.content.decode()
    assert several.status_code == 200
    assert re.findall(r'<tr data-player-id="([^"]+)"', html) == ["p2", "p1"]  # by rank
    assert "Crimson Badger" in html
    assert one["Location"] == "/players/p3/"
    assert exact_id["Location"] == "/players/p2/"
    assert nobody.status_code == 200
    assert "No player's name starts with “Nobody Here”." in nobody.content.decode()
