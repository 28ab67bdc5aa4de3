"""Season schedules: turn a board's schedule into season windows and create them ahead of time.

Every schedule is a cron expression read in the board's time zone; a season runs from one firing
to the next. Planning holds the board's row lock, and windows of one board may not overlap (a
database constraint), so two beats or two workers never create the same season twice.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from cronsim import CronSim
from django.db import transaction
from django.utils import timezone

from .models import DEFAULT_BOARD, MAX_SEASON_SECONDS, Board, ScheduleKind, Season
from .services import season_create

logger = logging.getLogger(__name__)


def schedule_window(board: Board, moment: datetime) -> tuple[datetime, datetime]:
    """The [start, end) window of the board's schedule that holds `moment`, in UTC.

    Firings are found on the local wall clock (cronsim on naive datetimes, so it never sees a
    clock change) and each is then placed at one UTC instant (`_firing_instant`). That placing
    keeps the order of the wall times, so the windows between consecutive instants tile time.
    """
    tz = ZoneInfo(board.schedule_timezone)
    wall = moment.astimezone(tz).replace(tzinfo=None, microsecond=0)
    # The last firing at or before the moment's wall time fires at or before the moment. In a
    # repeated hour, firings with later wall times may fire before it too: step past them.
    previous = next(CronSim(board.cron_expression, wall + timedelta(seconds=1), reverse=True))
    firings = CronSim(board.cron_expression, previous)
    start, end = _firing_instant(previous, tz), _firing_instant(next(firings), tz)
    while end <= moment:
        start, end = end, _firing_instant(next(firings), tz)
    return start, end


def _firing_instant(wall: datetime, tz: ZoneInfo) -> datetime:
    """The UTC instant at which the schedule fires for the naive local time `wall`.

    A wall time that occurs twice (the clock goes back) fires once, at its first occurrence.
    A wall time the clock skips (the clock goes forward) fires at the instant of the jump, the
    first local time after it that exists, as Debian cron and cronsim's own fix-up for
    fixed-time expressions do. Several skipped firings then share one instant and the windows
    between them vanish instead of being empty.
    """
    instant = wall.replace(tzinfo=tz, fold=0).astimezone(UTC)
    if instant.astimezone(tz).replace(tzinfo=None) == wall:
        return instant
    # Read with the offset before the jump a skipped time lands after it, with the offset after
    # the jump before it. Zones change offset on whole seconds: find the jump to the second.
    after = int(instant.timestamp())
    before = int(wall.replace(tzinfo=tz, fold=1).timestamp())
    while after - before > 1:
        middle = (before + after) // 2
        if datetime.fromtimestamp(middle, tz).replace(tzinfo=None) >= wall:
            after = middle
        else:
            before = middle
    return datetime.fromtimestamp(after, UTC)


def season_label(board: Board, starts_at: datetime) -> tuple[str, str]:
    """The slug and name of the season the board's schedule starts at `starts_at`."""
    local = starts_at.astimezone(ZoneInfo(board.schedule_timezone))
    if board.schedule == ScheduleKind.WEEKLY:
        year, week, _ = local.isocalendar()
        return f"w{year}-{week:02d}", f"Week {week}, {year}"
    if board.schedule == ScheduleKind.MONTHLY:
        return f"m{local:%Y-%m}", f"{local:%B %Y}"
    if board.schedule == ScheduleKind.QUARTERLY:
        quarter = (local.month - 1) // 3 + 1
        return f"s{local.year}q{quarter}", f"Q{quarter} {local.year}"
    return (
        f"s{local:%Y%m%d-%H%M}",
        f"Season of {local:%Y-%m-%d %H:%M} ({board.schedule_timezone})",
    )


def _season_at(board: Board, moment: datetime) -> Season:
    """The board's season holding `moment`, created from the schedule when there is none.

    A new window is clipped to the seasons already around it, so a board given a schedule
    after hand-made seasons continues from them instead of overlapping them.
    """
    existing = Season.objects.filter(board=board, starts_at__lte=moment, ends_at__gt=moment).first()
    if existing is not None:
        return existing
    start, end = schedule_window(board, moment)
    previous_end = (
        Season.objects.filter(board=board, ends_at__gt=start, ends_at__lte=moment)
        .order_by("-ends_at")
        .values_list("ends_at", flat=True)
        .first()
    )
    following_start = (
        Season.objects.filter(board=board, starts_at__gt=moment, starts_at__lt=end)
        .order_by("starts_at")
        .values_list("starts_at", flat=True)
        .first()
    )
    if (end - start).total_seconds() > MAX_SEASON_SECONDS:
        # Saving a board checks every window of its schedule (Board.clean); one saved before
        # that check, or around it, is not planned at all rather than cut into seasons that
        # begin in the past.
        raise ValueError(
            f"board {board.slug}: the schedule's window {start:%Y-%m-%d %H:%M} to "
            f"{end:%Y-%m-%d %H:%M} UTC is longer than a season may last; fix the schedule"
        )
    start = max(start, previous_end or start)
    end = min(end, following_start or end)
    slug, name = season_label(board, start)
    if Season.objects.filter(board=board, slug=slug).exists():
        slug = f"{slug}-{start:%H%M%S}"
    return season_create(
        board=board,
        slug=slug,
        name=name,
        starts_at=start,
        ends_at=end,
        grace_period=board.season_grace_period,
    )


def board_seasons_plan(*, board: Board, now: datetime | None = None) -> list[Season]:
    """Make sure a scheduled board has its running season and the one after it."""
    if board.schedule == ScheduleKind.NONE:
        return []
    now = now or timezone.now()
    with transaction.atomic():
        board = Board.objects.select_for_update().get(pk=board.pk)
        current = _season_at(board, now)
        upcoming = _season_at(board, current.ends_at)
    return [current, upcoming]


def default_board_ensure(*, now: datetime | None = None) -> tuple[Board, Season]:
    """The default board on a monthly schedule, with its running season (idempotent)."""
    board, _ = Board.objects.get_or_create(
        slug=DEFAULT_BOARD, defaults={"name": "Global", "schedule": ScheduleKind.MONTHLY}
    )
    if board.schedule == ScheduleKind.NONE:
        Board.objects.filter(pk=board.pk).update(schedule=ScheduleKind.MONTHLY)
        board.refresh_from_db()
    current, _ = board_seasons_plan(board=board, now=now)
    return board, current


def seasons_plan_all(*, now: datetime | None = None) -> int:
    """Plan every scheduled board; returns how many boards were planned."""
    boards = Board.objects.exclude(schedule=ScheduleKind.NONE)
    planned = 0
    for board in boards:
        # One board whose schedule cannot be planned must not stop the others.
        try:
            board_seasons_plan(board=board, now=now)
        except Exception:
            logger.exception("planning the seasons of board %s failed", board.slug)
        else:
            planned += 1
    return planned
