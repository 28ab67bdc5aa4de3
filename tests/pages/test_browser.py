"""The pages in a real browser (headless Chromium) against a real server, worker and Redis.

Each test posts through the site's REST API; the site's Celery worker mirrors the results into
Redis and the live stream pushes them to the open page. Screenshots of every page are saved
under test-output/screenshots/.
"""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from matches.models import GameServer
from pages.models import RankSample

from . import data
from .conftest import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

DESKTOP = {"width": 1100, "height": 900}
PHONE = {"width": 375, "height": 812}
# Bounds for a page to do something; not speed requirements (except where a test says so).
PAGE_WAIT_MS = 10_000


def seed(api, points: dict[str, int]) -> None:
    """Post one result per player and wait until the board shows all of them."""
    response = api.post(
        "/api/v1/scores",
        json=[
            {"player_id": pid, "points": p, "match_id": f"seed-{pid}"} for pid, p in points.items()
        ],
    )
    assert response.status_code == 200, response.text
    wait_until(
        lambda: api.get("/api/v1/leaderboard/top?limit=1").json()["total_players"] == len(points),
        timeout=15,
        what=f"{len(points)} seeded players on the board",
    )


def board_of(api, count: int) -> None:
    """Players p001..p<count> with names; p001 leads and each next one has 10 points less."""
    data.players(count)
    seed(api, {data.player_id(n): 10 * (count + 1 - n) for n in range(1, count + 1)})


def open_page(browser, url: str, *, viewport=DESKTOP, javascript: bool = True):
    context = browser.new_context(viewport=viewport, java_script_enabled=javascript)
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    return page, page.goto(url)


def wait_live(page) -> None:
    page.wait_for_selector('[data-live-status][data-state="live"]', timeout=PAGE_WAIT_MS)


def row_ids(page, scope: str = "") -> list[str]:
    return page.eval_on_selector_all(
        f"{scope} [data-rows] tr", "rows => rows.map(row => row.dataset.playerId)"
    )


@pytest.fixture
def season():
    board = data.global_board()
    return board, data.running_season(board)


def test_the_home_page_shows_the_top_entries(browser, site, game_server, season, screenshot):
    board_of(game_server, 40)

    page, response = open_page(browser, f"{site.url}/")

    assert response.status == 200
    assert page.get_by_role("heading", level=1, name="Global Season 12", exact=True).count() == 1
    assert row_ids(page) == [data.player_id(n) for n in range(1, 41)]
    first = page.locator("[data-rows] tr").first
    assert first.locator("td.rank").inner_text() == "1"
    assert first.locator(".name").inner_text() == "Ada Lovelace"
    assert first.locator("td.points").inner_text() == "400"
    assert "left" in page.inner_text(".time-left")
    wait_live(page)
    screenshot(page, "home")
    assert page.errors == []


def test_an_avatar_that_cannot_load_leaves_the_letter_badge(browser, site, game_server, season):
    board_of(game_server, 3)
    gone = "https://avatars.invalid/gone.png"  # .invalid never resolves (RFC 2606)
    profile = game_server.put("/api/v1/players/p001", json={"avatar_url": gone})
    assert profile.status_code == 200, profile.text

    page, response = open_page(browser, f"{site.url}/")

    assert gone in response.text()
    page.wait_for_function(
        "() => !document.querySelector('tr[data-player-id=\"p001\"] .avatar img')",
        timeout=PAGE_WAIT_MS,
    )
    assert page.inner_text('tr[data-player-id="p001"] .avatar') == "A"
    assert page.errors == []


def test_the_lookup_box_suggests_players_by_name_as_you_type(browser, site, game_server, season):
    board_of(game_server, 12)

    page, _ = open_page(browser, f"{site.url}/")
    page.fill("#lookup-player-id", "ad")

    page.wait_for_function(
        "() => document.querySelectorAll('#player-suggestions option').length > 0",
        timeout=PAGE_WAIT_MS,
    )
    first = page.locator("#player-suggestions option").first
    assert first.get_attribute("value") == "p001"
    assert first.get_attribute("label") == "Ada Lovelace · #1"
    assert page.errors == []


def test_a_posted_result_moves_the_row_on_the_open_page_within_two_seconds(
    browser, site, game_server, season, screenshot
):
    board_of(game_server, 12)
    page, _ = open_page(browser, f"{site.url}/")
    wait_live(page)
    # Marks that a reload or a re-rendered table would lose.
    page.evaluate(
        """() => {
            window.stillTheSamePage = true;
            document.querySelector('tr[data-player-id="p007"]').stillTheSameRow = true;
        }"""
    )

    response = game_server.post(
        "/api/v1/scores", json={"player_id": "p007", "points": 500, "match_id": "comeback"}
    )
    posted = time.monotonic()
    assert response.status_code == 201
    page.wait_for_function(
        "() => document.querySelector('[data-rows] tr').dataset.playerId === 'p007'",
        timeout=2_000,
    )
    moved_after = time.monotonic() - posted

    assert moved_after < 2.0
    assert row_ids(page)[:3] == ["p007", "p001", "p002"]
    assert page.evaluate(
        """() => window.stillTheSamePage === true &&
            document.querySelector('[data-rows] tr').stillTheSameRow === true"""
    )
    first = page.locator("[data-rows] tr").first
    assert first.locator("td.rank").inner_text() == "1"
    assert first.locator("td.points").inner_text() == "560"
    assert page.locator('tr[data-player-id="p001"] td.rank').inner_text() == "2"
    # Once the row has slid into place, while it is still highlighted.
    page.wait_for_timeout(600)
    screenshot(page, "home-live-update", full_page=False, still=False)
    assert page.errors == []


def test_the_friends_view_moves_live_and_says_who_passed_the_player(
    browser, site, game_server, season, screenshot
):
    board_of(game_server, 12)
    stored = game_server.put("/api/v1/players/p005/friends", json={"friends": ["p003", "p009"]})
    assert stored.status_code == 200, stored.text
    page, response = open_page(browser, f"{site.url}/boards/global/?friends_of=p005")
    assert response.status == 200
    assert row_ids(page) == ["p003", "p005", "p009"]
    wait_live(page)

    # p009 (40 points) comes past p005 (80) and p003 (100) to 115: second on the board, with
    # no tie (a tie within the second of the seed would rank by the id).
    posted = game_server.post(
        "/api/v1/scores", json={"player_id": "p009", "points": 75, "match_id": "friend-climbs"}
    )
    assert posted.status_code == 201
    page.wait_for_function(
        "() => document.querySelector('[data-rows] tr').dataset.playerId === 'p009'",
        timeout=PAGE_WAIT_MS,
    )

    assert row_ids(page) == ["p009", "p003", "p005"]
    first = page.locator("[data-rows] tr").first
    assert first.locator("td.rank").inner_text() == "1"
    assert first.locator("td.global-rank").inner_text() == "#2"
    notice = page.locator("[data-friends-notice]")
    notice.wait_for(state="visible", timeout=PAGE_WAIT_MS)
    name = data.NAMES[8]
    assert notice.inner_text() == f"{name} passed p005: now #1 among friends, #2 overall."
    screenshot(page, "friends-live", full_page=False, still=False)
    assert page.errors == []


def test_after_the_socket_drops_the_page_reconnects_and_resynchronises(
    browser, site, game_server, season
):
    board_of(game_server, 5)
    page, _ = open_page(browser, f"{site.url}/")
    wait_live(page)
    page.evaluate("() => { window.stillTheSamePage = true; }")

    site.stop_web()
    try:
        page.wait_for_selector(
            '[data-live-status][data-state="reconnecting"]', timeout=PAGE_WAIT_MS
        )
        # A result that arrives while the page is cut off: only a new snapshot can show it.
        _, key = GameServer.objects.create_key(name="while the server is down")
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"Api-Key {key}")
        response = api.post(
            "/api/v1/scores",
            {"player_id": "p005", "points": 1000, "match_id": "offline"},
            format="json",
        )
        assert response.status_code == 201
    finally:
        site.start_web(site.port)

    page.wait_for_function(
        "() => document.querySelector('[data-rows] tr').dataset.playerId === 'p005'",
        timeout=40_000,
    )
    wait_live(page)
    assert row_ids(page) == ["p005", "p001", "p002", "p003", "p004"]
    assert page.evaluate("() => window.stillTheSamePage === true")


@pytest.fixture
def player_with_a_past(game_server, season):
    """p015 is 15th of 30 now, was 3rd last season with a reward, and climbed over the day."""
    board, running = season
    board_of(game_server, 30)
    data.closed_season(
        board,
        [("p001", 900), ("p002", 800), ("p015", 700)]
        + [(data.player_id(n), 600 - n) for n in range(3, 15)],
        rewards={"p001": "gold-cup", "p015": "bronze-badge"},
    )
    now = timezone.now()
    RankSample.objects.bulk_create(
        RankSample(
            season=running,
            player_id="p015",
            rank=rank,
            points=rank,
            sampled_at=now - timedelta(hours=hours),
        )
        for hours, rank in [(22, 29), (19, 26), (15, 27), (11, 21), (7, 19), (4, 17), (2, 16)]
    )


def test_the_player_page_shows_around_me_history_and_live_rank(
    browser, site, game_server, player_with_a_past, screenshot
):
    page, response = open_page(browser, f"{site.url}/players/p015/")

    assert response.status == 200
    assert page.get_by_role("heading", level=1, name="John von Neumann", exact=True).count() == 1
    assert page.inner_text('[data-stat="rank"]') == "#15"
    assert page.inner_text('[data-stat="points"]') == "160"
    assert page.inner_text('[data-stat="percentile"]') == "53.33"
    assert row_ids(page, ".player-season") == [data.player_id(n) for n in range(10, 21)]
    me = page.locator('.player-season tr[aria-current="true"]')
    assert me.get_attribute("data-player-id") == "p015"
    history = page.locator(".history-table tbody tr")
    assert history.count() == 1
    assert history.first.inner_text().split("\t") == [
        "Season 11 global",
        "#3 of 15",
        "700",
        "bronze-badge",
    ]
    assert page.locator(".rank-chart svg polyline").count() == 1
    wait_live(page)
    screenshot(page, "player")

    # Someone below passes the player: their rank and the around-me list change in place.
    response = game_server.post(
        "/api/v1/scores", json={"player_id": "p017", "points": 25, "match_id": "overtake"}
    )
    assert response.status_code == 201
    page.wait_for_function(
        "() => document.querySelector('[data-stat=\"rank\"]').textContent === '#16'",
        timeout=2_000,
    )
    assert page.inner_text('.rank-chart [data-stat="rank-now"]') == "#16"
    # And a short notice says who it was (the socket's `overtaken`).
    notice = page.locator("[data-rank-notice]")
    notice.wait_for(state="visible", timeout=PAGE_WAIT_MS)
    assert notice.inner_text() == f"{data.display_name(17)} passed John von Neumann: now #16."
    page.wait_for_function(
        """() => [...document.querySelectorAll('.player-season [data-rows] tr')]
            .map(row => row.dataset.playerId).join() ===
            'p011,p012,p013,p014,p017,p015,p016,p018,p019,p020,p021'""",
        timeout=PAGE_WAIT_MS,
    )
    assert page.inner_text('[data-stat="points"]') == "160"
    assert page.errors == []


def test_at_phone_width_nothing_scrolls_sideways(
    browser, site, game_server, player_with_a_past, screenshot
):
    for path, name in [
        ("/", "home-phone"),
        ("/players/p015/", "player-phone"),
        ("/players/p016/", None),
        ("/boards/global/seasons/s11/", "closed-season-phone"),
        ("/boards/nope/", None),
    ]:
        page, _ = open_page(browser, f"{site.url}{path}", viewport=PHONE)
        overflow = page.evaluate(
            "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow == 0, f"{path} scrolls sideways by {overflow}px"
        if name:
            screenshot(page, name)
        page.context.close()


def test_without_javascript_the_board_pages_and_the_season_picker_work(
    browser, site, game_server, season, screenshot
):
    board, _ = season
    board_of(game_server, 130)
    data.closed_season(board, [("p002", 900), ("p001", 800)], rewards={"p002": "gold-cup"})
    page, _ = open_page(browser, f"{site.url}/", javascript=False)

    assert len(row_ids(page)) == 100
    page.click("text=Next →")
    page.wait_for_url("**/?page=2")
    assert row_ids(page) == [data.player_id(n) for n in range(101, 131)]
    assert page.locator("[data-rows] tr td.rank").first.inner_text() == "101"

    page.select_option("#season-select", "s11")
    page.click(".season-picker button")
    page.wait_for_url("**/boards/global/seasons/s11/")
    assert row_ids(page) == ["p002", "p001"]
    assert page.inner_text(".badge") == "Closed"
    screenshot(page, "closed-season")


def test_unknown_pages_get_the_404_page(browser, site, game_server, season, screenshot):
    page, response = open_page(browser, f"{site.url}/boards/nope/")

    assert response.status == 404
    assert page.inner_text("h1") == "Page not found"
    assert page.inner_text("main p") == "Unknown board 'nope'."
    screenshot(page, "not-found")

    response = page.goto(f"{site.url}/players/nobody/")
    assert response.status == 404
    assert page.inner_text("main p") == "There is no player 'nobody'."


# Every page the site serves to players, in the states a visitor meets them.
CSP_PAGES = [
    "/",
    "/boards/global/",
    "/boards/global/seasons/s11/",
    "/players/p015/",
    "/players/?player_id=p015",
    "/boards/nope/",
]


def test_no_page_breaks_the_content_security_policy(browser, site, player_with_a_past):
    context = browser.new_context(viewport=DESKTOP)
    # Before any page script: the browser's own report of each blocked load, inline script
    # or inline style, whatever later code does.
    context.add_init_script(
        """document.addEventListener('securitypolicyviolation', event => {
            (window.cspViolations = window.cspViolations || []).push(
                `${event.violatedDirective} ${event.blockedURI}`);
        });"""
    )
    page = context.new_page()
    console = []
    page.on("console", lambda message: console.append(message.text))
    violations = {}
    policies = {}

    for path in CSP_PAGES:
        response = page.goto(f"{site.url}{path}")
        if page.locator("[data-live-status]").count():
            wait_live(page)
        violations[path] = page.evaluate("() => window.cspViolations || []")
        policies[path] = response.header_value("content-security-policy")

    assert violations == {path: [] for path in CSP_PAGES}
    assert [text for text in console if "Content Security Policy" in text] == []
    # The directives come in no fixed order.
    assert {path: sorted(policy.split("; ")) for path, policy in policies.items()} == {
        path: data.STRICT_POLICY for path in CSP_PAGES
    }
