"""Rank samples: where players stood over a running season, for the rank chart of their page."""

from django.db import models


class RankSample(models.Model):
    """A player's rank and points in a season at one sampling instant (see sampling.py).

    Derived data: the periodic sampler writes it, closing a season makes it obsolete and the
    sampler's pruning removes it; nothing else depends on it.
    """

    # The unique constraint's index leads with the season: no index of its own.
    season = models.ForeignKey(
        "seasons.Season", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    player = models.ForeignKey("matches.Player", on_delete=models.CASCADE, related_name="+")
    rank = models.PositiveIntegerField()
    points = models.IntegerField()
    sampled_at = models.DateTimeField()

    class Meta:
        constraints = [
            # One sample per player per sampling instant: a retried run writes nothing twice.
            models.UniqueConstraint(
                fields=["season", "player", "sampled_at"], name="rank_sample_once_per_instant"
            ),
            models.CheckConstraint(condition=models.Q(rank__gte=1), name="rank_sample_rank_1_up"),
        ]

    def __str__(self) -> str:
        return f"{self.season_id} {self.player_id} #{self.rank} at {self.sampled_at:%Y-%m-%d %H:%M}"
