"""The fixed choices of boards and seasons: their rules, schedules and states. Kept apart from
the models (which import them from here, as everyone may through seasons.models)."""

from django.db import models


class ScoreOperator(models.TextChoices):
    SUM = "sum", "Sum of all results"
    BEST = "best", "Best single result"


class SortOrder(models.TextChoices):
    HIGHEST_FIRST = "highest_first", "Highest first"
    LOWEST_FIRST = "lowest_first", "Lowest first (times)"


class ScheduleKind(models.TextChoices):
    NONE = "none", "No schedule (seasons created by hand)"
    WEEKLY = "weekly", "Weekly (Mondays 00:00)"
    MONTHLY = "monthly", "Monthly (the 1st, 00:00)"
    QUARTERLY = "quarterly", "Quarterly (Jan, Apr, Jul, Oct 1st, 00:00)"
    CRON = "cron", "Cron expression"


# Every schedule is a cron expression: a season runs from one firing to the next.
SCHEDULE_CRON = {
    ScheduleKind.WEEKLY: "0 0 * * MON",
    ScheduleKind.MONTHLY: "0 0 1 * *",
    ScheduleKind.QUARTERLY: "0 0 1 1,4,7,10 *",
}


class SeasonState(models.TextChoices):
    """Stored (Season.state): how far the close job has got. Only the close job moves it.

    Whether a season is scheduled or running is not stored: it follows the clock. What clients
    see is SeasonStatus, derived from both."""

    OPEN = "open", "Open"
    CLOSING = "closing", "Closing"
    CLOSED = "closed", "Closed"


class SeasonStatus(models.TextChoices):
    """Derived, never stored: what the API and the pages show, from SeasonState and the clock
    (Season.status_at)."""

    SCHEDULED = "scheduled", "Scheduled"
    RUNNING = "running", "Running"
    CLOSING = "closing", "Closing"
    CLOSED = "closed", "Closed"
