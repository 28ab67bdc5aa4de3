"""A board's reward tiers: the prizes its closes give, for a range of final ranks or a top
percentage, of the whole board, of each value of one of its segment dimensions, or of its clan
board."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from decimal import Decimal

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q

from config.building_blocks.segments import CLAN_DIMENSION, dimension_validator


class RewardTier(models.Model):
    """A prize for a range of final ranks (1, 2-10, 11-100) or for a top percentage."""

    # By name: the boards' module names this one (seasons/models.py).
    board = models.ForeignKey(
        "seasons.Board", on_delete=models.CASCADE, related_name="reward_tiers"
    )
    reward_code = models.CharField(max_length=64)
    rank_from = models.PositiveIntegerField(null=True, blank=True)
    rank_to = models.PositiveIntegerField(null=True, blank=True)
    top_percent = models.DecimalField(
        max_digits=5,
        decimal_places=2,
        null=True,
        blank=True,
        validators=[MinValueValidator(0), MaxValueValidator(100)],
        help_text="Instead of a rank range: the best this percent of players.",
    )
    # A tier of one of the board's segment dimensions ranks within each of its values: "1-100 of
    # `country`" rewards the top 100 of each country. Empty: the whole board.
    segment_dimension = models.CharField(
        max_length=32,
        blank=True,
        default="",
        validators=[dimension_validator],
        help_text="Empty for the whole board, one of its segment dimensions (the ranks are "
        "then within each value of it: the top 100 of each country), or 'clan': the clan "
        "board's ranks.",
    )
    # A clan tier's reward goes to the clan and, with this, to each of its members as well.
    members_too = models.BooleanField(
        default=False, help_text="For a clan tier: each member of the clan gets the reward too."
    )

    class Meta:
        ordering = ["board", "rank_from", "top_percent"]
        constraints = [
            models.CheckConstraint(
                condition=(
                    Q(
                        rank_from__isnull=False,
                        rank_to__isnull=False,
                        top_percent__isnull=True,
                        rank_from__gte=1,
                        rank_to__gte=F("rank_from"),
                    )
                    | Q(
                        rank_from__isnull=True,
                        rank_to__isnull=True,
                        top_percent__isnull=False,
                        top_percent__gt=0,
                        top_percent__lte=100,
                    )
                ),
                name="reward_tier_ranks_or_percent",
                violation_error_message=(
                    "Give either a rank range (from 1 or more, to at least from) or a top "
                    "percentage (more than 0, at most 100), not both."
                ),
            )
        ]

    def __str__(self) -> str:
        within = f" of each {self.segment_dimension}" if self.segment_dimension else ""
        if self.top_percent is not None:
            return f"top {self.top_percent}%{within}: {self.reward_code}"
        return f"#{self.rank_from}-{self.rank_to}{within}: {self.reward_code}"

    def clean(self) -> None:
        super().clean()
        if self.segment_dimension not in (
            "",
            CLAN_DIMENSION,
            *(self.board.segment_dimensions if self.board_id else []),
        ):
            raise ValidationError(
                {
                    "segment_dimension": "Name one of the board's segment dimensions, or "
                    f"'{CLAN_DIMENSION}' for its clan board."
                }
            )
        if self.members_too and self.segment_dimension != CLAN_DIMENSION:
            raise ValidationError(
                {"members_too": f"Only a tier of '{CLAN_DIMENSION}' rewards a clan's members."}
            )
        if self.top_percent is not None:
            if self.rank_from is not None or self.rank_to is not None:
                raise ValidationError("Give either a rank range or a top percentage, not both.")
        elif self.rank_from is None or self.rank_to is None:
            raise ValidationError("Give a rank range (from and to) or a top percentage.")
        elif self.rank_from < 1:
            raise ValidationError({"rank_from": "Ranks start at 1."})
        elif self.rank_to < self.rank_from:
            raise ValidationError(
                {
                    "rank_to": (
                        f"The range ends before it starts: 'to' ({self.rank_to}) must be at "
                        f"least 'from' ({self.rank_from})."
                    )
                }
            )


def percent_last_rank(top_percent: Decimal, players: int) -> int:
    """The last rank a top-percentage tier reaches over `players` ranked players: rounded up, as
    the close's SQL does (leaderboards/rewards.py), so a tier always reaches someone."""
    return math.ceil(Decimal(top_percent) * players / 100)


def _preference(tier: RewardTier) -> tuple:
    # The close's order among matching tiers (leaderboards/rewards.py, _TIER_ORDER): ranges
    # before percentages, the range starting highest, then ending first, the smallest share.
    return (
        tier.top_percent is not None,
        -(tier.rank_from or 0),
        tier.rank_to or 0,
        tier.top_percent or 0,
        tier.id or 0,
    )


def tier_for_rank(tiers: Iterable[RewardTier], rank: int | None, players: int) -> RewardTier | None:
    """The tier of `tiers` (one dimension's) that `rank` of `players` would get if the season
    closed now, by the close's rule; None for no tier or no rank. The live push tells a followed
    player of a change of it; the close itself applies the same rule in SQL."""
    if rank is None:
        return None
    matching = [
        tier
        for tier in tiers
        if (tier.rank_from is not None and tier.rank_from <= rank <= (tier.rank_to or 0))
        or (tier.top_percent is not None and rank <= percent_last_rank(tier.top_percent, players))
    ]
    return min(matching, key=_preference, default=None)


def tier_edges(tiers: Sequence[RewardTier], players: int) -> set[int]:
    """The last rank each tier reaches now: the edges a followed player is told of crossing."""
    return {
        tier.rank_to if tier.top_percent is None else percent_last_rank(tier.top_percent, players)
        for tier in tiers
        if tier.rank_to is not None or tier.top_percent is not None
    }
