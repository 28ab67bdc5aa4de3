"""Boards (named leaderboards with their rules), the seasons that reset them and the reward tiers
a close awards. A closed season's archive and rewards are the close's: leaderboards/models.py."""

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.contrib.postgres.constraints import ExclusionConstraint
from django.contrib.postgres.fields import ArrayField, DateTimeRangeField, RangeOperators
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Func, Q, Value
from django.utils import timezone

from config.building_blocks.expressions import AllAbove, EachMatches
from config.building_blocks.segments import (
    CLAN_DIMENSION,
    DIMENSION_CHARACTERS,
    MAX_DIMENSIONS,
    dimension_validator,
)
from config.building_blocks.slugs import SLUG_MAX_LENGTH, slug_validator

from .choices import (
    SCHEDULE_CRON,
    ScheduleKind,
    ScoreOperator,
    SeasonState,
    SeasonStatus,
    SortOrder,
)
from .cron import cron_schedule_check

# A model of this app in a module of its own (the prizes a board gives), named here as Django and
# the other apps look for the app's models.
from .reward_tiers import RewardTier as RewardTier
from .scoring import TIME_SLOTS

# A season's window must fit the 24 low bits of the composite score (see seasons/scoring.py).
MAX_SEASON_SECONDS = TIME_SLOTS - 1


# The board a request means when it names none; created by `manage.py bootstrap`.
DEFAULT_BOARD = "global"

# The top-N edges a followed player is told of crossing (a socket's `threshold` message), besides
# each reward tier's edge: a board that sets none has these.
DEFAULT_RANK_THRESHOLDS = [1, 10, 100]
MAX_RANK_THRESHOLDS = 10


def default_rank_thresholds() -> list[int]:
    return list(DEFAULT_RANK_THRESHOLDS)


# Sorted sets one season's standings may be spread over (leaderboards/store.py): beyond the
# nodes a cluster has, more shards only add fan-out to every read.
MAX_SHARDS = 16


class Board(models.Model):
    slug = models.SlugField(max_length=SLUG_MAX_LENGTH, unique=True, validators=[slug_validator])
    name = models.CharField(max_length=200)
    score_operator = models.CharField(
        max_length=8, choices=ScoreOperator.choices, default=ScoreOperator.SUM
    )
    sort_order = models.CharField(
        max_length=16, choices=SortOrder.choices, default=SortOrder.HIGHEST_FIRST
    )
    schedule = models.CharField(
        max_length=16, choices=ScheduleKind.choices, default=ScheduleKind.NONE
    )
    schedule_cron = models.CharField(
        max_length=100,
        blank=True,
        default="",
        help_text="Five-field cron expression, for the cron schedule (e.g. '0 18 * * FRI').",
    )
    schedule_timezone = models.CharField(
        max_length=64, default="UTC", help_text="Time zone the schedule is read in."
    )
    season_grace_period = models.DurationField(
        default=timedelta(hours=1), help_text="Grace period of the seasons the schedule creates."
    )
    max_points_per_result = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Results with more points are rejected (anti-cheat); empty for no limit.",
    )
    keep_closed_standings_days = models.PositiveIntegerField(
        default=7,
        help_text="Days a closed season's leaderboard stays in Redis (the archive stays forever).",
    )
    # A hidden board is the studio's until an operator publishes it: game servers post to it,
    # but no public list, page or read knows it (its reads answer 404 board_not_found).
    hidden = models.BooleanField(
        default=False,
        help_text="Hidden from players (lists, pages, API reads) until published; game servers "
        "can still post results to it.",
    )
    # A ban of a player archived in this board's closed seasons corrects their archives at once
    # (leaderboards/archive_corrections.py); off, an operator corrects them from the admin.
    correct_archive_on_ban = models.BooleanField(
        default=False,
        help_text="A ban re-ranks the closed seasons the player is archived in (the honest "
        "players below move up, rewards follow), as the admin's correction does.",
    )
    # One sorted set per season, or N spread by player over a Redis Cluster's nodes for a board
    # too large or too hot for one node. A season keeps the number it was created with.
    shards = models.PositiveSmallIntegerField(
        default=1,
        blank=True,  # a form that leaves it out or empty means one
        validators=[MinValueValidator(1), MaxValueValidator(MAX_SHARDS)],
        help_text=f"Sorted sets each new season's standings are spread over by player (1 to "
        f"{MAX_SHARDS}); more than one only on a Redis Cluster with as many nodes. Seasons "
        "already created keep theirs.",
    )
    # The slices of the board every read can be asked for (`segment=country:DE`): the values
    # are the players' own (matches.PlayerSegment), set by game servers.
    segment_dimensions = ArrayField(
        models.CharField(max_length=32, validators=[dimension_validator]),
        size=MAX_DIMENSIONS,
        default=list,
        blank=True,
        help_text=f"Segment dimensions, comma-separated (such as country,platform), at most "
        f"{MAX_DIMENSIONS}: each read of the board can then be asked within one value of one.",
    )
    # Live sockets tell a followed player when they enter or leave the top N for each of these
    # (and each reward tier's edge): docs/websocket.md, "Rank events".
    rank_thresholds = ArrayField(
        models.PositiveIntegerField(validators=[MinValueValidator(1)]),
        size=MAX_RANK_THRESHOLDS,
        default=default_rank_thresholds,
        blank=True,
        help_text=f"Top-N edges a followed player is told of entering or leaving, "
        f"comma-separated (such as 1,10,100), at most {MAX_RANK_THRESHOLDS}; each reward "
        "tier's edge is told too.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]
        constraints = [
            models.CheckConstraint(
                condition=Q(shards__gte=1, shards__lte=MAX_SHARDS), name="board_shards_in_range"
            ),
            models.CheckConstraint(
                condition=Q(segment_dimensions__len__lte=MAX_DIMENSIONS),
                name="board_segment_dimensions_at_most_max",
            ),
            models.CheckConstraint(
                condition=EachMatches(
                    F("segment_dimensions"), pattern=f"^({DIMENSION_CHARACTERS}(,|$))*$"
                ),
                name="board_segment_dimensions_allowed_characters",
            ),
            models.CheckConstraint(
                condition=Q(rank_thresholds__len__lte=MAX_RANK_THRESHOLDS)
                & Q(AllAbove(Value(0), F("rank_thresholds"))),
                name="board_rank_thresholds_positive_and_few",
            ),
            models.CheckConstraint(
                condition=Q(season_grace_period__gte=timedelta(0)),
                name="board_season_grace_not_negative",
            ),
        ]
        # Beyond Django's add/change/delete/view: the console's actions whose effect players
        # see at once (docs/operations.md, "Who may do what").
        permissions = [("publish_board", "Can publish or hide a board")]

    def __str__(self) -> str:
        return self.slug

    @property
    def lowest_first(self) -> bool:
        return self.sort_order == SortOrder.LOWEST_FIRST

    @property
    def standings_worsen(self) -> bool:
        """Whether a player's composite score only falls as results arrive: sums on a
        lowest-first board. On every other board it only rises. The mirror moves a score in that
        direction only (ZADD LT or GT), which makes it indifferent to redelivery and order."""
        return self.score_operator == ScoreOperator.SUM and self.lowest_first

    @property
    def cron_expression(self) -> str:
        if self.schedule == ScheduleKind.CRON:
            return self.schedule_cron
        return SCHEDULE_CRON.get(self.schedule, "")

    def clean(self) -> None:
        super().clean()
        if self.shards is None:
            self.shards = 1
        try:
            ZoneInfo(self.schedule_timezone)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValidationError({"schedule_timezone": "Unknown time zone."}) from exc
        if self.schedule == ScheduleKind.CRON:
            cron_schedule_check(self.schedule_cron, timezone.now(), max_seconds=MAX_SEASON_SECONDS)
        else:
            # A cron expression left over from an earlier cron schedule means nothing now.
            self.schedule_cron = ""
        if self.season_grace_period is not None and self.season_grace_period < timedelta(0):
            raise ValidationError({"season_grace_period": "The grace period cannot be negative."})
        if len(set(self.segment_dimensions)) != len(self.segment_dimensions):
            raise ValidationError({"segment_dimensions": "Name each dimension once."})
        if len(set(self.rank_thresholds)) != len(self.rank_thresholds):
            raise ValidationError({"rank_thresholds": "Name each threshold once."})
        self.rank_thresholds = sorted(self.rank_thresholds)
        if CLAN_DIMENSION in self.segment_dimensions:
            raise ValidationError(
                {"segment_dimensions": f"'{CLAN_DIMENSION}' is every board's clans: name it so."}
            )
        self._rules_unchanged_while_running()

    def _rules_unchanged_while_running(self) -> None:
        """Scoring rules apply to a whole season: a season that already has standings keeps the
        rules it started with, so they cannot change while one is running or closing. So do its
        segment dimensions: its segments' sets in Redis were built with them."""
        if self.pk is None:
            return
        before = (
            Board.objects.filter(pk=self.pk)
            .values("score_operator", "sort_order", "segment_dimensions")
            .first()
        )
        if before is None or (
            before["score_operator"] == self.score_operator
            and before["sort_order"] == self.sort_order
            and before["segment_dimensions"] == list(self.segment_dimensions)
        ):
            return
        # `totals`: the write path's per-season totals (matches), reached through the relation
        # so that seasons does not import the app above it. A board has few seasons not closed.
        running = self.seasons.exclude(state=SeasonState.CLOSED).order_by("starts_at")
        scored = next((season for season in running if season.totals.exists()), None)
        if scored is not None:
            raise ValidationError(
                "The scoring rules and segment dimensions cannot change while season "
                f"'{scored.slug}' ({scored.name}) has scores: its standings were computed with "
                "the current rules. Change them once it is closed, before the next season gets "
                "its first result, or create a new board with the new rules."
            )


def season_overlap_message(other: "Season") -> str:
    return (
        f"This season overlaps season '{other.slug}' ({other.name}, "
        f"{other.starts_at:%Y-%m-%d %H:%M} to {other.ends_at:%Y-%m-%d %H:%M} UTC) of the same "
        "board. Seasons of one board may not overlap, so that every result has one season: "
        "move its start or end."
    )


class Season(models.Model):
    board = models.ForeignKey(Board, on_delete=models.PROTECT, related_name="seasons")
    slug = models.SlugField(max_length=SLUG_MAX_LENGTH, validators=[slug_validator])
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
    # Progress of the close job, so an admin can watch it and a rerun can resume it.
    close_step = models.CharField(max_length=32, blank=True, default="")
    close_started_at = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    archived_players = models.PositiveIntegerField(null=True, blank=True)
    snapshot_attempts = models.PositiveSmallIntegerField(default=0)
    standings_removed_at = models.DateTimeField(
        null=True, blank=True, help_text="When the closed season's Redis key was removed."
    )
    # When the season's standings in Redis were first known whole (leaderboards.store, "Whole
    # standings"). Set once, never cleared: from then on a set without its whole marker was
    # lost with its Redis, and its reads answer 503 until it is rebuilt.
    standings_whole_since = models.DateTimeField(null=True, blank=True, editable=False)
    # Where the reconciliation's walk through the whole season stopped (a player_id).
    reconcile_cursor = models.CharField(max_length=64, blank=True, default="")
    # Taken from the board when the season is created (left empty: the board's); it names the
    # season's keys in Redis, so it cannot change once the season has started.
    shards = models.PositiveSmallIntegerField(
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_SHARDS)],
        help_text="Sorted sets the standings are spread over by player; empty: the board's. "
        "Fixed once the season starts.",
    )
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
            models.CheckConstraint(
                condition=Q(shards__gte=1, shards__lte=MAX_SHARDS), name="season_shards_in_range"
            ),
            # Two seasons of one board never overlap, so every result has exactly one home.
            ExclusionConstraint(
                name="season_windows_do_not_overlap",
                violation_error_message=(
                    "This season overlaps another season of the same board; seasons of one "
                    "board may not overlap."
                ),
                expressions=[
                    (F("board"), RangeOperators.EQUAL),
                    (
                        Func(
                            F("starts_at"),
                            F("ends_at"),
                            function="TSTZRANGE",
                            output_field=DateTimeRangeField(),
                        ),
                        RangeOperators.OVERLAPS,
                    ),
                ],
            ),
        ]
        indexes = [models.Index(fields=["board", "starts_at", "ends_at"])]
        # Beyond Django's add/change/delete/view: a close archives and rewards for good, and a
        # rebuild replaces the live standings, so neither comes with the right to edit a season.
        permissions = [
            ("close_season", "Can close a season now (archive and rewards cannot be undone)"),
            ("rebuild_season", "Can rebuild a season's leaderboard from PostgreSQL"),
            (
                "correct_archive",
                "Can correct a closed season's archive (re-rank it, revoke and grant rewards)",
            ),
        ]

    def __str__(self) -> str:
        # Lists that show many seasons select their boards with them (the admin does).
        return f"{self.board.name} · {self.name}"

    def save(self, *args: object, **kwargs: object) -> None:
        if self.shards is None:
            # A new season takes the board's number, however it is created (schedule, admin,
            # command line).
            self.shards = self.board.shards
        super().save(*args, **kwargs)  # type: ignore[arg-type]

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
        self._shards_fixed_once_started()
        self._place_fixed_once_scored()
        overlapping = self.overlapping_season()
        if overlapping is not None:
            # On the start field, so the exclusion constraint (which says the same without
            # naming the other season) is not checked a second time.
            raise ValidationError({"starts_at": season_overlap_message(overlapping)})

    def _shards_fixed_once_started(self) -> None:
        """The number of shards names the season's keys in Redis: once it has started (results
        may be mirrored), or its standings were built and marked whole before it started (an
        operator's rebuild), a new number would leave its standings behind and its reads would
        find no whole set (503) from its start."""
        if self.pk is None or self.shards is None:
            return
        before = (
            Season.objects.filter(pk=self.pk)
            .values("shards", "starts_at", "standings_whole_since")
            .first()
        )
        if before is None or before["shards"] == self.shards:
            return
        if before["starts_at"] <= timezone.now() or self.state != SeasonState.OPEN:
            raise ValidationError(
                {
                    "shards": f"This season has started (shards: {before['shards']}); the "
                    "number of shards cannot change while it runs. Set the board's number: "
                    "the next season takes it."
                }
            )
        if before["standings_whole_since"] is not None:
            raise ValidationError(
                {
                    "shards": "This season's standings are in Redis already, built by a "
                    f"rebuild (shards: {before['shards']}); the number of shards cannot change "
                    "any more. Set the board's number: the next season takes it."
                }
            )

    def unused(self) -> bool:
        """Not started, open, and holding no result: nothing refers to it yet, so it may go."""
        return (
            self.state == SeasonState.OPEN
            and self.starts_at > timezone.now()
            and not self.results.exists()
            and not self.totals.exists()
        )

    def scored_since_start(self) -> bool:
        """Whether the season, as saved, has started and has scores (or is closing or closed):
        its results, totals, archive and public addresses name it by its board and slug, and
        every score's time is counted from its start."""
        if self.pk is None:
            return False
        saved = Season.objects.filter(pk=self.pk).values("starts_at", "state").first()
        if saved is None:
            return False
        if saved["state"] != SeasonState.OPEN:
            return True
        return saved["starts_at"] <= timezone.now() and self.totals.exists()

    def _place_fixed_once_scored(self) -> None:
        """A running season with scores keeps its board, slug and start (its end may move)."""
        if self.pk is None:
            return
        before = Season.objects.filter(pk=self.pk).values("board_id", "slug", "starts_at").first()
        if before is None or (
            before["board_id"] == self.board_id
            and before["slug"] == self.slug
            and before["starts_at"] == self.starts_at
        ):
            return
        if self.scored_since_start():
            raise ValidationError(
                f"Season '{before['slug']}' has started and has scores: its board, slug and "
                "start cannot change (its results, totals and public addresses name it by "
                "them). Change its end, or close it and plan a new season."
            )

    def overlapping_season(self) -> "Season | None":
        """The first other season of the board whose window overlaps this one's."""
        if not (self.board_id and self.starts_at and self.ends_at):
            return None
        return (
            Season.objects.filter(
                board_id=self.board_id, starts_at__lt=self.ends_at, ends_at__gt=self.starts_at
            )
            .exclude(pk=self.pk)
            .order_by("starts_at")
            .first()
        )

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
