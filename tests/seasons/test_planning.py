"""Schedules turn into seasons on time, ahead of time, exactly once."""

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from threading import Barrier

import pytest
import time_machine
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import connection

from seasons.models import Board, ScheduleKind, Season
from seasons.planning import board_seasons_plan, schedule_window, seasons_plan_all
from tests.factories import BoardFactory, SeasonFactory

pytestmark = pytest.mark.django_db

WEDNESDAY = datetime(2026, 11, 25, 15, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("schedule", "cron", "tz", "start", "end", "slug"),
    [
        ("weekly", "", "UTC", "2026-11-23T00:00", "2026-11-30T00:00", "w2026-48"),
        ("monthly", "", "UTC", "2026-11-01T00:00", "2026-12-01T00:00", "m2026-11"),
        ("quarterly", "", "UTC", "2026-10-01T00:00", "2027-01-01T00:00", "s2026q4"),
        ("weekly", "", "America/New_York", "2026-11-23T05:00", "2026-11-30T05:00", "w2026-48"),
        ("cron", "0 18 * * FRI", "UTC", "2026-11-20T18:00", "2026-11-27T18:00", "s20261120-1800"),
    ],
)
def test_a_schedule_gives_the_window_holding_a_moment(schedule, cron, tz, start, end, slug):
    board = BoardFactory(schedule=schedule, schedule_cron=cron, schedule_timezone=tz)

    with time_machine.travel(WEDNESDAY, tick=False):
        [current, upcoming] = board_seasons_plan(board=board)

    assert (current.starts_at, current.ends_at, current.slug) == (
        datetime.fromisoformat(start).replace(tzinfo=UTC),
        datetime.fromisoformat(end).replace(tzinfo=UTC),
        slug,
    )
    assert upcoming.starts_at == current.ends_at
    assert schedule_window(board, current.ends_at)[0] == upcoming.starts_at


# Europe/Berlin in 2026: on Mar 29 the clock jumps from 02:00 CET to 03:00 CEST at 01:00 UTC;
# on Oct 25 it goes back from 03:00 CEST to 02:00 CET at 01:00 UTC, so 02:00-03:00 runs twice
# (00:00-01:00 UTC and 01:00-02:00 UTC).
@pytest.mark.parametrize(
    ("cron", "moment", "start", "end"),
    [
        ("0 * * * *", "2026-10-25T00:40", "2026-10-25T00:00", "2026-10-25T02:00"),
        ("0 * * * *", "2026-10-25T01:40", "2026-10-25T00:00", "2026-10-25T02:00"),
        ("*/30 * * * *", "2026-10-25T00:10", "2026-10-25T00:00", "2026-10-25T00:30"),
        ("*/30 * * * *", "2026-10-25T01:00", "2026-10-25T00:30", "2026-10-25T02:00"),
        ("*/30 * * * *", "2026-10-25T01:40", "2026-10-25T00:30", "2026-10-25T02:00"),
        ("0 * * * *", "2026-03-29T00:59:59.999999", "2026-03-29T00:00", "2026-03-29T01:00"),
        ("0 * * * *", "2026-03-29T01:00", "2026-03-29T01:00", "2026-03-29T02:00"),
        ("*/30 * * * *", "2026-03-29T00:45", "2026-03-29T00:30", "2026-03-29T01:00"),
        ("*/30 * * * *", "2026-03-29T01:00", "2026-03-29T01:00", "2026-03-29T01:30"),
        ("0 2 * * *", "2026-03-29T00:59", "2026-03-28T01:00", "2026-03-29T01:00"),
        ("0 2 * * *", "2026-03-29T01:00", "2026-03-29T01:00", "2026-03-30T00:00"),
    ],
)
def test_a_schedule_across_a_clock_change_gives_the_window_holding_the_moment(
    post_scores, cron, moment, start, end
):
    # given an hourly, half-hourly or daily board read in Berlin time
    board = BoardFactory(
        slug="global", schedule="cron", schedule_cron=cron, schedule_timezone="Europe/Berlin"
    )
    moment, start, end = (
        datetime.fromisoformat(value).replace(tzinfo=UTC) for value in (moment, start, end)
    )

    # when the window is asked for, and the board planned, at a moment around the clock change
    window = schedule_window(board, moment)
    with time_machine.travel(moment, tick=False):
        [current, upcoming] = board_seasons_plan(board=board)
        response = post_scores({"player_id": "p1", "points": 5, "match_id": "m1"})

    # then the window holds the moment, the season is that window, and a result then counts
    assert window == (start, end)
    assert (current.starts_at, current.ends_at) == (start, end)
    assert upcoming.starts_at == end
    assert response.status_code == 201
    assert response.json()["season"] == current.slug


@pytest.mark.parametrize("cron", ["0 * * * *", "*/30 * * * *"])
@pytest.mark.parametrize("night", ["2026-03-29", "2026-10-25"])
def test_planning_through_a_clock_change_creates_seasons_that_meet(cron, night):
    # given an hourly or half-hourly board read in Berlin time
    board = BoardFactory(schedule="cron", schedule_cron=cron, schedule_timezone="Europe/Berlin")
    midnight = datetime.fromisoformat(night).replace(tzinfo=UTC)

    # when planning runs every ten minutes through the night of the clock change
    for step in range(-6, 24):
        with time_machine.travel(midnight + timedelta(minutes=10 * step), tick=False):
            board_seasons_plan(board=board)

    # then the seasons follow each other with no gap and no overlap
    seasons = list(Season.objects.filter(board=board).order_by("starts_at"))
    assert all(season.ends_at > season.starts_at for season in seasons)
    assert [s.ends_at for s in seasons[:-1]] == [s.starts_at for s in seasons[1:]]
    assert seasons[0].starts_at <= midnight - timedelta(hours=1)
    assert seasons[-1].ends_at > midnight + timedelta(hours=3)


def test_planning_twice_creates_nothing_new():
    board = BoardFactory(schedule="weekly")
    with time_machine.travel(WEDNESDAY, tick=False):
        first = board_seasons_plan(board=board)
        second = board_seasons_plan(board=board)
        seasons_plan_all()

    assert [s.pk for s in first] == [s.pk for s in second]
    assert Season.objects.filter(board=board).count() == 2


@pytest.mark.django_db(transaction=True)
def test_two_planners_at_once_create_each_season_once():
    board = BoardFactory(schedule="weekly")
    barrier = Barrier(2)

    def plan() -> list[int]:
        barrier.wait(timeout=10)
        try:
            with time_machine.travel(WEDNESDAY, tick=False):
                return [s.pk for s in board_seasons_plan(board=board)]
        finally:
            connection.close()

    with ThreadPoolExecutor(2) as pool:
        results = [f.result(timeout=30) for f in [pool.submit(plan), pool.submit(plan)]]

    assert results[0] == results[1]
    assert Season.objects.filter(board=board).count() == 2


def test_a_schedule_continues_after_hand_made_seasons():
    board = BoardFactory(schedule="weekly")
    manual = SeasonFactory(
        board=board,
        slug="launch",
        starts_at=datetime(2026, 11, 20, tzinfo=UTC),
        ends_at=datetime(2026, 11, 26, tzinfo=UTC),
    )

    with time_machine.travel(WEDNESDAY, tick=False):
        [current, upcoming] = board_seasons_plan(board=board)

    assert current == manual
    assert (upcoming.starts_at, upcoming.ends_at) == (
        datetime(2026, 11, 26, tzinfo=UTC),
        datetime(2026, 11, 30, tzinfo=UTC),
    )


def test_seasons_of_one_board_may_not_overlap():
    from django.db import IntegrityError

    season = SeasonFactory()

    with pytest.raises(IntegrityError):
        SeasonFactory(
            board=season.board,
            starts_at=season.starts_at + timedelta(days=1),
            ends_at=season.ends_at + timedelta(days=1),
        )


@pytest.mark.parametrize(
    ("fields", "error_field"),
    [
        ({"schedule": "cron", "schedule_cron": "not cron"}, "schedule_cron"),
        ({"schedule": "cron", "schedule_cron": "0 0 1 1 *"}, "schedule_cron"),
        ({"schedule": "weekly", "schedule_timezone": "Mars/Olympus"}, "schedule_timezone"),
    ],
)
def test_bad_schedules_are_refused(fields, error_field):
    board = Board(slug="b", name="B", **fields)

    with pytest.raises(ValidationError) as error:
        board.full_clean()
    assert error_field in error.value.message_dict


def test_the_api_shows_when_the_next_season_starts(client):
    BoardFactory(slug="weekly", schedule="weekly")
    with time_machine.travel(WEDNESDAY, tick=False):
        seasons_plan_all()
        body = client.get("/api/v1/boards").json()[0]

    assert body["schedule"] == "weekly"
    assert body["current_season"]["ends_at"] == "2026-11-30T00:00:00Z"
    assert body["next_season"]["starts_at"] == "2026-11-30T00:00:00Z"
    assert body["next_season"]["status"] == "scheduled"


def test_a_schedule_with_a_window_too_long_for_a_season_is_not_planned_at_all(db):
    # Saved around the form's check: Feb 1 to Jan 1 is 334 days, longer than a season may last.
    board = BoardFactory(slug="yearly-ish")
    Board.objects.filter(pk=board.pk).update(
        schedule=ScheduleKind.CRON, schedule_cron="0 0 1 1,2 *"
    )
    board.refresh_from_db()

    planned = seasons_plan_all(now=datetime(2026, 6, 1, tzinfo=UTC))

    assert planned == 0
    assert not Season.objects.filter(board=board).exists()


@pytest.mark.django_db
def test_a_scheduled_board_saved_in_the_admin_has_its_seasons_at_once(client):
    client.force_login(User.objects.create_superuser("operator", "op@example.com", "pw"))
    form = {
        "slug": "weekly-cup",
        "name": "Weekly cup",
        "score_operator": "sum",
        "sort_order": "highest_first",
        "max_points_per_result": "",
        "schedule": "weekly",
        "schedule_cron": "",
        "schedule_timezone": "UTC",
        "season_grace_period": "01:00:00",
        "keep_closed_standings_days": "7",
        "reward_tiers-TOTAL_FORMS": "0",
        "reward_tiers-INITIAL_FORMS": "0",
        "seasons-TOTAL_FORMS": "0",
        "seasons-INITIAL_FORMS": "0",
    }

    with time_machine.travel(datetime(2026, 6, 10, 12, tzinfo=UTC), tick=False):
        created = client.post("/admin/seasons/board/add/", form)

    assert created.status_code == 302, created.content.decode()[:2000]
    seasons = Season.objects.filter(board__slug="weekly-cup").order_by("starts_at")
    assert [(s.starts_at, s.ends_at) for s in seasons] == [
        (datetime(2026, 6, 8, tzinfo=UTC), datetime(2026, 6, 15, tzinfo=UTC)),
        (datetime(2026, 6, 15, tzinfo=UTC), datetime(2026, 6, 22, tzinfo=UTC)),
    ]
