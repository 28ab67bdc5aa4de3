"""Cron schedules as a board's page saves them: the expression must parse, and every season it
makes must fit the time a composite score can hold (seasons/scoring.py)."""

from datetime import datetime, timedelta

from cronsim import CronSim, CronSimError
from django.core.exceptions import ValidationError

# Firings looked at when a cron schedule is saved: a few years of a schedule that fires up to
# every few hours, enough to meet every kind of window it makes (the rare long ones included).
_CRON_CHECK_FIRINGS = 50_000
_CRON_CHECK_YEARS = 28  # weekdays and leap years repeat together every 28 years


def longest_window(
    expression: str, now: datetime, *, max_seconds: int
) -> tuple[datetime, datetime] | None:
    """The first window of the cron schedule longer than `max_seconds`, or None.

    Firings are read on the wall clock, as the planner reads them; a clock change moves a
    window's length by an hour at most, so the check keeps that hour in hand."""
    wall = now.replace(tzinfo=None, microsecond=0)
    firings = CronSim(expression, wall)
    previous = next(firings)
    horizon = previous + timedelta(days=366 * _CRON_CHECK_YEARS)
    for _ in range(_CRON_CHECK_FIRINGS):
        firing = next(firings, None)
        if firing is None:
            return None
        if (firing - previous).total_seconds() + 3600 > max_seconds:
            return previous, firing
        if firing > horizon:
            return None
        previous = firing
    return None


def cron_schedule_check(expression: str, now: datetime, *, max_seconds: int) -> None:
    """Raise a ValidationError on the schedule's field unless the expression parses and each of
    its windows lasts at most `max_seconds`."""
    try:
        longest = longest_window(expression, now, max_seconds=max_seconds)
    except (CronSimError, ValueError, StopIteration) as exc:
        raise ValidationError({"schedule_cron": f"Invalid cron expression: {exc}"}) from exc
    if longest is not None:
        start, end = longest
        raise ValidationError(
            {
                "schedule_cron": (
                    "Every season of a schedule must last at most 2^24 - 1 seconds "
                    f"(about 194 days); this one would run from {start:%Y-%m-%d %H:%M} "
                    f"to {end:%Y-%m-%d %H:%M} ({(end - start).days} days)."
                )
            }
        )
