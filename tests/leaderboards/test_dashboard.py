"""The operator dashboard: its charts of the last hour and day (from the samples), and per board,
players (ZCARD), results by whole minutes (counted once each), mirror lag, drift, the running
and next season, and the last close with its duration."""

import re
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import connection
from django.db.models import F
from django.test.utils import CaptureQueriesContext

from leaderboards import store
from leaderboards.dashboard import boards_health
from leaderboards.models import OperationsMinute, ReconciliationRun
from leaderboards.operations import operations_sample
from matches.models import PendingStanding
from seasons.models import Board, Season, SeasonState
from tests.factories import BoardFactory, MatchResultFactory, PlayerFactory, SeasonFactory
from tests.staff import staff

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 6, 10, 12, 0, 30, tzinfo=UTC)


@pytest.fixture
def weekly():
    """A board with a closed, a running and a next season; three players in Redis; results at
    11:59:10 (the last full minute), 11:30 and 11:00 (in the hour), 10:59:59 (before it)."""
    board = BoardFactory(slug="weekly", name="Weekly")
    SeasonFactory(
        board=board,
        slug="w1",
        name="Week 1",
        starts_at=NOW - timedelta(days=14),
        ends_at=NOW - timedelta(days=7),
        state=SeasonState.CLOSED,
        close_started_at=NOW - timedelta(days=7) + timedelta(minutes=1),
        closed_at=NOW - timedelta(days=7) + timedelta(minutes=1, seconds=42.5),
        archived_players=1234,
    )
    running = SeasonFactory(
        board=board,
        slug="w2",
        name="Week 2",
        starts_at=NOW - timedelta(days=7),
        ends_at=NOW + timedelta(days=2, hours=3),
    )
    SeasonFactory(
        board=board,
        slug="w3",
        name="Week 3",
        starts_at=NOW + timedelta(days=2, hours=3),
        ends_at=NOW + timedelta(days=9, hours=3),
    )
    store.write_standings(
        store.StandingWrite(season_id=running.pk, player_id=f"p{i}", composite=i) for i in range(3)
    )
    player = PlayerFactory()
    for received in ("11:59:10", "11:30:00", "11:00:00", "10:59:59"):
        hour, minute, second = map(int, received.split(":"))
        MatchResultFactory(
            season=running,
            player=player,
            received_at=NOW.replace(hour=hour, minute=minute, second=second),
        )
    PendingStanding.objects.create(
        # one write's standings: two in the running season, one in a season of another board
        standings={str(running.pk): [["p9", 1], ["p8", 2]], str(running.pk + 1000): [["p9", 3]]},
        changed_at=NOW - timedelta(seconds=4),
    )
    ReconciliationRun.objects.create(
        season=running, kind="recent", checked=10, drift=2, fixed=2, started_at=NOW, finished_at=NOW
    )
    return board


def test_the_dashboard_rows_say_exactly_what_each_board_is_doing(weekly):
    quiet = BoardFactory(slug="quiet", name="Quiet", hidden=True)

    with time_machine.travel(NOW, tick=False):
        health = {row.board.slug: row for row in boards_health()}

    row = health["weekly"]
    assert (row.players, row.results_last_minute, row.results_last_hour) == (3, 1, 3)
    assert (row.pending, row.mirror_lag_seconds, row.drift) == (2, 4.0, 2)
    assert (row.running.slug, row.running_left) == ("w2", timedelta(days=2, hours=3))
    assert (row.upcoming.slug, row.upcoming_in) == ("w3", timedelta(days=2, hours=3))
    assert (row.last_close.slug, row.last_close_seconds) == ("w1", "42.5")
    empty = health["quiet"]
    assert (empty.board, empty.players, empty.results_last_hour, empty.running) == (
        quiet,
        None,
        0,
        None,
    )


def _results_counted(queries: CaptureQueriesContext) -> list[dict[str, str]]:
    return [q for q in queries.captured_queries if "matches_matchresult" in q["sql"]]


def test_each_minute_is_counted_once_then_read_from_the_cache(weekly):
    with time_machine.travel(NOW, tick=False):
        boards_health()
        with CaptureQueriesContext(connection) as queries:
            again = boards_health()

    assert not _results_counted(queries)
    assert again[0].results_last_hour == 3


def test_the_minutes_the_sampler_counted_are_not_counted_again_by_the_table(weekly):
    with time_machine.travel(NOW, tick=False):
        operations_sample()
        with CaptureQueriesContext(connection) as queries:
            health = boards_health()

    assert not _results_counted(queries)
    sampled = OperationsMinute.objects.order_by("-minute").values_list("results", flat=True)
    assert health[0].results_last_minute == sampled[0] == 1
    assert health[0].results_last_hour == sum(sampled) == 3


def test_the_admin_links_the_dashboard_and_shows_it(client, weekly):
    client.force_login(User.objects.create_superuser("operator", "op@example.com", "pw"))

    with time_machine.travel(NOW, tick=False):
        index = client.get("/admin/").content.decode()
        page = client.get("/admin/dashboard/")

    assert 'href="/admin/dashboard/"' in index
    text = page.content.decode()
    assert page.status_code == 200
    assert "Week 2</a>, ends 2026-06-12 15:00 UTC (2\xa0days, 3\xa0hours left)" in text
    assert "Week 1, closed 2026-06-03 12:02 UTC, took 42.5 s, 1234 players" in text


def test_the_dashboard_is_for_staff_only(client):
    assert client.get("/admin/dashboard/").status_code == 302


def test_a_close_that_took_no_measurable_time_reads_zero_seconds(weekly):
    Season.objects.filter(slug="w1").update(closed_at=F("close_started_at"))

    with time_machine.travel(NOW, tick=False):
        row = {row.board.slug: row for row in boards_health()}["weekly"]

    assert row.last_close_seconds == "0.0"


def test_the_dashboard_says_utc_and_a_boards_own_zone_beside_it(client, weekly):
    Board.objects.filter(slug="weekly").update(schedule_timezone="Asia/Tokyo")
    client.force_login(User.objects.create_superuser("operator", "op@example.com", "pw"))

    with time_machine.travel(NOW, tick=False):
        text = client.get("/admin/dashboard/").content.decode()

    # 15:00 UTC is midnight of the next day in Tokyo: the date is said too.
    assert "ends 2026-06-12 15:00 UTC (2026-06-13 00:00 Asia/Tokyo)" in text


CHARTS = ["results", "mirror_lag", "drift", "sockets", "responses_4xx", "responses_5xx"]


def figures(html: str) -> dict[str, str]:
    """Each chart's figure, by its series."""
    return dict(
        re.findall(r'<figure class="ops-chart" data-series="(\w+)">(.*?)</figure>', html, re.S)
    )


def polyline_points(figure: str) -> list[int]:
    return [
        len(points.split())
        for points in re.findall(r'<polyline class="line" points="([^"]+)"', figure)
    ]


@pytest.fixture
def sampled():
    """Minutes 11:57 and 11:58 sampled, 11:59 not (yet)."""
    for minute, results, lag in ((57, 12, 0.5), (58, 40, 2.25)):
        OperationsMinute.objects.create(
            minute=NOW.replace(hour=11, minute=minute, second=0),
            results=results,
            mirror_lag_seconds=lag,
            sockets=3,
            responses_4xx=1,
            responses_5xx=0,
        )


def test_the_dashboard_charts_the_last_hour_with_each_series_latest_value(admin_client, sampled):
    with time_machine.travel(NOW, tick=False):
        html = admin_client.get("/admin/dashboard/").content.decode()

    charts = figures(html)
    assert list(charts) == CHARTS
    assert {name: polyline_points(figure) for name, figure in charts.items()} == {
        "results": [2],
        "mirror_lag": [2],
        "drift": [],
        "sockets": [2],
        "responses_4xx": [2],
        "responses_5xx": [2],
    }
    assert '<strong class="ops-latest" data-latest>40</strong>' in charts["results"]
    assert '<strong class="ops-latest" data-latest>2.2 s</strong>' in charts["mirror_lag"]
    assert (
        '<desc id="ops-results-desc">Results per minute over the last hour: 40 at 11:58 UTC,'
        " highest 40; 2 of 60 points sampled.</desc>"
    ) in charts["results"]
    assert "No samples yet" in charts["drift"]
    assert '<a href="?range=hour" aria-current="page">Last hour</a>' in html


def test_the_day_switch_charts_quarter_hours(admin_client, sampled):
    with time_machine.travel(NOW, tick=False):
        html = admin_client.get("/admin/dashboard/?range=day").content.decode()

    charts = figures(html)
    assert '<h2 id="charts-heading">Last day, per 15 minutes</h2>' in html
    assert '<a href="?range=day" aria-current="page">Last day</a>' in html
    # 11:57 and 11:58 are one quarter hour: one point, drawn as a dot.
    assert polyline_points(charts["results"]) == [2]
    assert "26 at 11:45 UTC, highest 26; 1 of 96 points sampled." in charts["results"]


def test_with_nothing_sampled_each_chart_says_so(admin_client):
    with time_machine.travel(NOW, tick=False):
        html = admin_client.get("/admin/dashboard/").content.decode()

    charts = figures(html)
    assert list(charts) == CHARTS
    assert all(polyline_points(figure) == [] for figure in charts.values())
    assert all("No samples yet" in figure for figure in charts.values())
    assert "Open live sockets: nothing sampled over the last hour yet." in charts["sockets"]


def test_an_unknown_range_is_a_400_that_writes_nothing(admin_client):
    with time_machine.travel(NOW, tick=False):
        response = admin_client.get("/admin/dashboard/?range=week")

    assert response.status_code == 400
    assert response.json() == {
        "error": {
            "code": "invalid_range",
            "message": "Unknown range 'week': the charts cover 'hour' or 'day'.",
            "details": {"range": ["day", "hour"]},
        }
    }
    assert OperationsMinute.objects.count() == 0
    # The view stopped before counting any minute of results into the cache.
    assert cache.get("dashboard:results:202606101159") is None


def test_a_view_only_account_sees_the_charts(client, sampled):
    looker = staff(client, "looker", every_view=True)

    with time_machine.travel(NOW, tick=False):
        html = looker.get("/admin/dashboard/?range=day").content.decode()

    assert list(figures(html)) == CHARTS
