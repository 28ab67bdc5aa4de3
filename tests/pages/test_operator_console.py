"""The operator's flows in the admin, in a real browser against the real stack (web server, Celery
worker, Redis): create a board with reward tiers, ban and unban, close now, void a result, preview
rewards, the dashboard and its charts at desktop and phone width. Form errors are asserted by
their text. Screenshots of each flow are saved under test-output/screenshots/, and into
docs/screenshots/ for docs/operations.md's console section when README_SCREENSHOTS=1 (so a plain
`make test` leaves the checkout as it was)."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.contrib.auth.models import User
from django.utils import timezone

from leaderboards.models import OperationsMinute
from matches.models import MatchResult, Player
from seasons.models import Board, RewardTier, Season, SeasonState
from tests.factories import SeasonFactory

from . import data
from .conftest import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
FOR_README = os.environ.get("README_SCREENSHOTS") == "1"
DOCS = ROOT / ("docs" if FOR_README else "test-output") / "screenshots"
WAIT_MS = 15_000
CONSOLE = {"width": 1280, "height": 900}


def shot(page, name: str) -> None:
    DOCS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(DOCS / f"operator-{name}.png"), full_page=True)


def logged_in(browser, site):
    operator = User.objects.create_superuser("operator", "op@example.com", "unused")
    # Hashed as the site checks it: the tests' own settings hash with a fast hasher it lacks.
    operator.password = PBKDF2PasswordHasher().encode("a long passphrase", "operatorsalt")
    operator.save(update_fields=["password"])
    page = browser.new_context(viewport=CONSOLE).new_page()
    page.goto(f"{site.url}/admin/login/")
    page.fill("#id_username", "operator")
    page.fill("#id_password", "a long passphrase")
    page.click("input[type=submit]")
    page.wait_for_selector("#operator-dashboard", timeout=WAIT_MS)
    return page


def post(api, results) -> None:
    response = api.post("/api/v1/scores", json=results)
    assert response.status_code == 200, response.text


def ranks(api, board="global") -> list[tuple[str, int]]:
    entries = api.get(f"/api/v1/leaderboard/top?board={board}").json()["entries"]
    return [(e["player_id"], e["points"]) for e in entries]


def settled(api, expected, board="global") -> None:
    wait_until(lambda: ranks(api, board) == expected, timeout=15, what=f"the board at {expected}")


def test_an_operator_creates_a_hidden_board_with_reward_tiers(browser, site, game_server):
    page = logged_in(browser, site)
    page.goto(f"{site.url}/admin/seasons/board/add/")
    page.fill("#id_slug", "launch")
    page.fill("#id_name", "Launch week")
    page.check("#id_hidden")
    page.fill("#id_reward_tiers-0-rank_from", "10")
    page.fill("#id_reward_tiers-0-rank_to", "5")
    page.fill("#id_reward_tiers-0-reward_code", "gold")
    page.click("input[name=_save]")

    page.wait_for_selector(".errorlist", timeout=WAIT_MS)
    assert (
        "The range ends before it starts: 'to' (5) must be at least 'from' (10)."
        in page.inner_text("#reward_tiers-group")
    )
    assert Board.objects.filter(slug="launch").count() == 0
    shot(page, "board-tier-error")

    page.fill("#id_reward_tiers-0-rank_from", "1")
    page.fill("#id_reward_tiers-0-rank_to", "1")
    page.click("input[name=_save]")

    page.wait_for_selector(".messagelist .success", timeout=WAIT_MS)
    board = Board.objects.get(slug="launch")
    assert board.hidden is True
    assert list(RewardTier.objects.filter(board=board).values_list("rank_from", "reward_code")) == [
        (1, "gold")
    ]
    assert game_server.get("/api/v1/leaderboard/top?board=launch").status_code == 404


def test_an_operator_bans_with_a_reason_and_unbans(browser, site, game_server):
    board = data.global_board()
    data.running_season(board)
    post(game_server, [{"player_id": "cheat", "points": 90, "match_id": "m1"}])
    post(game_server, [{"player_id": "fair", "points": 50, "match_id": "m1"}])
    settled(game_server, [("cheat", 90), ("fair", 50)])
    page = logged_in(browser, site)

    page.goto(f"{site.url}/admin/matches/player/cheat/change/")
    page.click("text=Ban…")
    page.click("#content input[type=submit]")  # no reason: the browser asks for one
    assert page.eval_on_selector("#id_reason", "field => field.validationMessage") == (
        "Please fill out this field."
    )
    assert Player.objects.get(player_id="cheat").banned_at is None
    page.fill("#id_reason", "aimbot in match m1")
    page.fill("#id_until", "2020-01-01 00:00")
    page.click("#content input[type=submit]")
    assert "The end of a temporary ban must be in the future." in page.inner_text("#content")
    assert Player.objects.get(player_id="cheat").banned_at is None
    page.fill("#id_until", "")
    shot(page, "ban-confirm")
    page.click("#content input[type=submit]")

    page.wait_for_selector(".messagelist .success", timeout=WAIT_MS)
    assert Player.objects.get(player_id="cheat").ban_reason == "aimbot in match m1"
    settled(game_server, [("fair", 50)])

    page.click("text=Unban…")
    page.click("#content input[type=submit]")
    page.wait_for_selector(".messagelist .success", timeout=WAIT_MS)
    settled(game_server, [("cheat", 90), ("fair", 50)])


def test_an_operator_closes_now_after_confirming_and_the_next_season_runs(
    browser, site, game_server
):
    board = data.global_board()
    season = data.running_season(board)
    # The next season, as the planner keeps one ahead: close now starts it at once.
    SeasonFactory(
        board=board,
        slug="s13",
        name="Season 13",
        starts_at=season.ends_at,
        ends_at=season.ends_at + timedelta(days=7),
    )
    post(game_server, [{"player_id": "p1", "points": 10, "match_id": "m1"}])
    settled(game_server, [("p1", 10)])
    page = logged_in(browser, site)

    page.goto(f"{site.url}/admin/seasons/season/")
    page.check(f"input[name=_selected_action][value='{season.pk}']")
    page.select_option("select[name=action]", "close_now")
    page.click("button[name=index]")

    page.wait_for_selector("text=Close these seasons now?", timeout=WAIT_MS)
    assert "Each season ends now, with no grace period" in page.inner_text("#content")
    shot(page, "close-now-confirm")
    assert Season.objects.get(pk=season.pk).state == SeasonState.OPEN
    page.click("input[value='Yes, close them now']")

    page.wait_for_selector(".messagelist .success", timeout=WAIT_MS)
    wait_until(
        lambda: Season.objects.get(pk=season.pk).state == SeasonState.CLOSED,
        timeout=30,
        what="the season closed by the worker",
    )
    current = game_server.get("/api/v1/boards").json()[0]["current_season"]
    assert (current["slug"], current["status"]) == ("s13", "running")
    page.goto(f"{site.url}/admin/dashboard/")
    assert "Season 12, closed" in page.inner_text("#boards")
    shot(page, "dashboard")


def test_an_operator_voids_a_result_and_the_rank_changes(browser, site, game_server):
    board = data.global_board()
    data.running_season(board)
    post(game_server, [{"player_id": "cheat", "points": 90, "match_id": "m1"}])
    post(game_server, [{"player_id": "cheat", "points": 5, "match_id": "m2"}])
    post(game_server, [{"player_id": "fair", "points": 50, "match_id": "m3"}])
    settled(game_server, [("cheat", 95), ("fair", 50)])
    voided = MatchResult.objects.get(match_id="m1")
    page = logged_in(browser, site)

    page.goto(f"{site.url}/admin/matches/matchresult/?q=cheat")
    page.check(f"input[name=_selected_action][value='{voided.pk}']")
    page.select_option("select[name=action]", "void")
    page.click("button[name=index]")
    page.wait_for_selector("text=Void these results?", timeout=WAIT_MS)
    page.click("input[value='Yes, void them']")  # no reason: the browser asks for one
    assert page.eval_on_selector("#id_reason", "field => field.validationMessage") == (
        "Please fill out this field."
    )
    assert MatchResult.objects.get(pk=voided.pk).counted is True
    page.fill("#id_reason", "impossible score")
    shot(page, "void-confirm")
    page.click("input[value='Yes, void them']")

    page.wait_for_selector(".messagelist .success", timeout=WAIT_MS)
    settled(game_server, [("fair", 50), ("cheat", 5)])
    assert "voided: impossible score" in page.inner_text("#result_list")
    page.goto(f"{site.url}/boards/global/")
    assert page.locator("[data-rows] tr").first.get_attribute("data-player-id") == "fair"


def test_an_operator_previews_rewards_before_closing(browser, site, game_server):
    board = data.global_board()
    season = data.running_season(board)
    RewardTier.objects.create(board=board, rank_from=1, rank_to=1, reward_code="gold")
    RewardTier.objects.create(board=board, top_percent=10, reward_code="silver")
    post(
        game_server,
        [{"player_id": f"p{n:02d}", "points": 100 - n, "match_id": "m"} for n in range(1, 30)],
    )
    wait_until(
        lambda: game_server.get("/api/v1/leaderboard/top").json()["total_players"] == 29,
        timeout=15,
        what="29 players on the board",
    )
    page = logged_in(browser, site)

    page.goto(f"{site.url}/admin/seasons/season/{season.pk}/change/")
    page.click("text=Preview rewards")

    page.wait_for_selector("#tiers", timeout=WAIT_MS)
    tiers = page.inner_text("#tiers")
    assert "silver\tranks 1-3\tranks 2-3\t2" in tiers
    assert "rounded up" in page.inner_text("#content")
    players = page.inner_text("#players")
    assert "1\tp01\t99\tgold" in players
    assert "4\tp04\t96\t–" in players
    shot(page, "rewards-preview")
    assert Season.objects.get(pk=season.pk).state == SeasonState.OPEN


PHONE = {"width": 375, "height": 812}
CHARTS = ["results", "mirror_lag", "drift", "sockets", "responses_4xx", "responses_5xx"]


def watched(context):
    """A page of `context` that keeps the console's errors and the page's uncaught errors."""
    page = context.new_page()
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return page, errors


def test_the_dashboard_draws_its_charts_at_desktop_and_phone_width(browser, site):
    now = timezone.now().replace(second=0, microsecond=0)
    for ago, results, lag in ((4, 120, 0.5), (3, 180, 1.5), (2, 90, 6.0)):
        OperationsMinute.objects.create(
            minute=now - timedelta(minutes=ago),
            results=results,
            mirror_lag_seconds=lag,
            sockets=12,
            responses_4xx=3,
            responses_5xx=ago % 2,
        )
    desktop = logged_in(browser, site)
    session = desktop.context.storage_state()

    for viewport, name in ((CONSOLE, "dashboard-charts"), (PHONE, "dashboard-charts-phone")):
        page, errors = watched(browser.new_context(viewport=viewport, storage_state=session))
        page.goto(f"{site.url}/admin/dashboard/")

        figures = page.locator("figure.ops-chart")
        assert figures.evaluate_all("fs => fs.map(f => f.dataset.series)") == CHARTS
        assert page.locator("figure[data-series=results] polyline.line").count() == 1
        assert page.inner_text("figure[data-series=results] [data-latest]") == "90"
        assert page.text_content("figure[data-series=drift] text.empty") == "No samples yet"
        # Every chart is drawn whole inside the screen's width, with its line visible.
        boxes = [figures.nth(i).bounding_box() for i in range(len(CHARTS))]
        assert all(box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"] for box in boxes)
        line = page.locator("figure[data-series=results] polyline.line").bounding_box()
        assert line["width"] > 0 and line["height"] > 0
        assert errors == []
        shot(page, name)
