"""Schedule windows tile time across every clock change of a year, in every kind of time zone.

No database: `schedule_window` reads only the board's cron expression and time zone.
"""

from datetime import UTC, datetime, timedelta
from itertools import pairwise
from zoneinfo import ZoneInfo

import pytest
from cronsim import CronSim
from hypothesis import given, settings
from hypothesis import strategies as st

from seasons.models import SCHEDULE_CRON, Board, ScheduleKind
from seasons.planning import schedule_window

ZONES = ["Europe/Berlin", "America/New_York", "Australia/Sydney", "Asia/Kolkata", "UTC"]
CRONS = [
    "0 * * * *",
    "*/30 * * * *",
    "0 2 * * *",
    "30 2 * * SUN",
    SCHEDULE_CRON[ScheduleKind.WEEKLY],
    SCHEDULE_CRON[ScheduleKind.MONTHLY],
]
AROUND = timedelta(days=2)


def clock_changes(zone: str, year: int) -> list[datetime]:
    """The UTC instants of `year` at which the zone's offset changes (all on the hour here)."""
    tz = ZoneInfo(zone)
    hours = [datetime(year, 1, 1, tzinfo=UTC) + timedelta(hours=n) for n in range(366 * 24)]
    offsets = [hour.astimezone(tz).utcoffset() for hour in hours]
    return [
        hour
        for hour, (before, after) in zip(hours[1:], pairwise(offsets), strict=True)
        if hour.year == year and before != after
    ]


ZONE_CLOCK_CHANGES = {zone: clock_changes(zone, 2026) for zone in ZONES}
# Every zone is walked across every zone's changes: a change elsewhere is an ordinary instant.
CLOCK_CHANGES = sorted({change for changes in ZONE_CLOCK_CHANGES.values() for change in changes})


def scheduled_board(cron: str, zone: str) -> Board:
    return Board(slug="b", name="B", schedule="cron", schedule_cron=cron, schedule_timezone=zone)


def windows_between(
    board: Board, since: datetime, until: datetime
) -> list[tuple[datetime, datetime]]:
    """Consecutive windows, each asked for at the end of the one before. Each must hold the
    instant it was asked for and start there, else the walk would not move on."""
    windows = [schedule_window(board, since)]
    assert windows[0][0] <= since < windows[0][1]
    while windows[-1][1] <= until:
        following = schedule_window(board, windows[-1][1])
        assert windows[-1][1] == following[0] < following[1]
        windows.append(following)
    return windows


def season_starts(board: Board, since: datetime, until: datetime) -> list[datetime]:
    """Where the rule says seasons start in [since, until]: a local firing time at its first
    occurrence, or, when the clock skips over it, at the instant the clock jumps."""
    tz = ZoneInfo(board.schedule_timezone)
    changes = ZONE_CLOCK_CHANGES[board.schedule_timezone]
    wall_since = (since.astimezone(tz) - timedelta(days=1)).replace(tzinfo=None)
    wall_until = (until.astimezone(tz) + timedelta(days=1)).replace(tzinfo=None)
    starts: list[datetime] = []
    for wall in CronSim(board.cron_expression, wall_since):
        if wall > wall_until:
            break
        instant = wall.replace(tzinfo=tz, fold=0).astimezone(UTC)
        if instant.astimezone(tz).replace(tzinfo=None) != wall:
            # Read with the offset before the jump, a skipped time lands just after the jump.
            instant = max(change for change in changes if change <= instant)
        if since <= instant <= until and instant not in starts:
            starts.append(instant)
    return starts


@pytest.mark.parametrize("cron", CRONS)
@pytest.mark.parametrize("zone", ZONES)
def test_windows_across_every_clock_change_meet_and_start_where_the_schedule_fires(zone, cron):
    # given a board of the schedule, read in the zone
    board = scheduled_board(cron, zone)

    for change in CLOCK_CHANGES:
        # when walking window after window from before the change to after it
        windows = windows_between(board, change - AROUND, change + AROUND)

        # then the windows meet exactly, none empty, each holding the instant asked for (all
        # checked on the walk), and each runs from one firing of the schedule to the next
        first_start, last_end = windows[0][0], windows[-1][1]
        assert [start for start, _ in windows] + [last_end] == season_starts(
            board, first_start, last_end
        )


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(
    zone=st.sampled_from(ZONES),
    cron=st.sampled_from(CRONS),
    change=st.sampled_from(CLOCK_CHANGES),
    offset=st.timedeltas(min_value=-AROUND, max_value=AROUND),
)
def test_the_window_of_any_moment_holds_it_and_meets_its_neighbours(zone, cron, change, offset):
    # given a board of the schedule and a moment near a clock change
    board = scheduled_board(cron, zone)
    moment = change + offset

    # when asking for the window of the moment
    start, end = schedule_window(board, moment)

    # then it holds the moment, and the windows before and after it meet it exactly
    assert start <= moment < end
    assert schedule_window(board, start - timedelta(microseconds=1))[1] == start
    assert schedule_window(board, end)[0] == end
