"""Boards (named leaderboards with their rules) and the seasons that reset them."""

from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

# A season's window must fit the 24 low bits of the composite score (see leaderboards/scoring.py).
MAX_SEASON_SECONDS = 2**24 - 1

slug_validator = RegexValidator(
    r"^[a-z0-9][a-z0-9_-]{0,63}$",
    "Use 1-64 lowercase letters, digits, '-' or '_', starting with a letter or digit.",
)


class ScoreOperator(models.TextChoices):
    SUM = "sum", "Sum of all results"
    BEST = "best", "Best single result"


class SortOrder(models.TextChoices):
    HIGHEST_FIRST = "highest_first", "Highest first"
    LOWEST_FIRST = "lowest_first", "Lowest first (times)"


class Board(models.Model):
    slug = models.SlugField(max_length=64, unique=True, validators=[slug_validator])
    name = models.CharField(max_length=200)
    score_operator = models.CharField(
        max_length=8, choices=ScoreOperator.choices, default=ScoreOperator.SUM
    )
    sort_order = models.CharField(
        max_length=16, choices=SortOrder.choices, default=SortOrder.HIGHEST_FIRST
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug

    @property
    def lowest_first(self) -> bool:
        return self.sort_order == SortOrder.LOWEST_FIRST


class SeasonState(models.TextChoices):
    """What the close job has done; whether a season is scheduled or running follows the clock."""

    OPEN = "open", "Open"
    CLOSING = "closing", "Closing"
    CLOSED = "closed", "Closed"


class SeasonStatus(models.TextChoices):
    SCHEDULED = "scheduled", "Scheduled"
    RUNNING = "running", "Running"
    CLOSING = "closing", "Closing"
    CLOSED = "closed", "Closed"


class Season(models.Model):
    board = models.ForeignKey(Board, on_delete=models.PROTECT, related_name="seasons")
    slug = models.SlugField(max_length=64, validators=[slug_validator])
    name = models.CharField(max_length=200)
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField(
        help_text="Results that ended at or after this time do not count."
    )
    grace_period = models.DurationField(
        default=timedelta(hours=1),
        help_text="How long after ends_at late results (that ended before ends_at) are accepted.",
    )
    state = models.CharField(max_length=8, choices=SeasonState.choices, default=SeasonState.OPEN)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["board_id", "starts_at"]
        constraints = [
            models.UniqueConstraint(fields=["board", "slug"], name="season_unique_slug_per_board"),
            models.CheckConstraint(
                condition=Q(ends_at__gt=F("starts_at")), name="season_ends_after_start"
            ),
            models.CheckConstraint(
                condition=Q(ends_at__lte=F("starts_at") + timedelta(seconds=MAX_SEASON_SECONDS)),
                name="season_window_fits_score",
            ),
            models.CheckConstraint(
                condition=Q(grace_period__gte=timedelta(0)), name="season_grace_not_negative"
            ),
        ]
        indexes = [models.Index(fields=["board", "starts_at", "ends_at"])]

    def __str__(self) -> str:
        return f"{self.board_id}:{self.slug}"

    def clean(self) -> None:
        super().clean()
        if self.starts_at and self.ends_at:
            if self.ends_at <= self.starts_at:
                raise ValidationError({"ends_at": "A season must end after it starts."})
            if (self.ends_at - self.starts_at).total_seconds() > MAX_SEASON_SECONDS:
                raise ValidationError(
                    {
                        "ends_at": (
                            f"A season may last at most {MAX_SEASON_SECONDS:,} seconds "
                            "(2^24 - 1, about 194 days): the time part of the score has 24 bits."
                        )
                    }
                )
        if self.grace_period is not None and self.grace_period < timedelta(0):
            raise ValidationError({"grace_period": "The grace period cannot be negative."})

    @property
    def accepts_until(self) -> datetime:
        return self.ends_at + self.grace_period

    def status_at(self, now: datetime) -> str:
        if self.state == SeasonState.CLOSED:
            return SeasonStatus.CLOSED
        # Past its end a season only takes late results (grace) until the close job archives it.
        if self.state == SeasonState.CLOSING or now >= self.ends_at:
            return SeasonStatus.CLOSING
        if now < self.starts_at:
            return SeasonStatus.SCHEDULED
        return SeasonStatus.RUNNING

    @property
    def status(self) -> str:
        return self.status_at(timezone.now())

    def holds(self, moment: datetime) -> bool:
        """Whether a result that ended at `moment` belongs to this season's window."""
        return self.starts_at <= moment < self.ends_at
