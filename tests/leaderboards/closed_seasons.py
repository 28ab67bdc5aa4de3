"""What the `ended` season (tests/leaderboards/conftest.py) archives when it closes, and how the
close tests read an archive."""

from leaderboards.models import ArchivedStanding, SeasonReward


def archive(season):
    return list(
        ArchivedStanding.objects.filter(season=season)
        .order_by("rank")
        .values_list("rank", "competition_rank", "player_id", "points")
    )


def rewards(season):
    return dict(SeasonReward.objects.filter(season=season).values_list("player_id", "reward_code"))


EXPECTED_ORDER = [
    "p00",
    "p01",
    "p02",
    "p03",
    "p04",
    "p07",
    "p08",
    "p09",
    "p10",
    "p11",
    "p06",
    "p05",
]


# What the `ended` fixture's reward tiers give its players when it closes.
EXPECTED_REWARDS = {
    "p00": "gold",
    "p01": "silver",
    "p02": "silver",
    "p03": "top-half",
    "p04": "top-half",
    "p07": "top-half",
}
