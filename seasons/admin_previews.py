"""What the boards' and seasons' admin pages say a close would do now: the close-now page's
counts and the warnings for reward tiers that would pay no one. Words to help an operator,
read from the rewards preview; never a reason for a page to fail."""

from typing import Any

from config.building_blocks.admin import counted

from .models import Board, Season, SeasonState
from .previews import season_rewards_preview
from .selectors import season_current


def _preview_if_readable(season: Season) -> Any:
    """What closing `season` now would give (its counts alone), or None when its standings
    cannot be read now: the admin's words about it are a help, never a reason to fail."""
    try:
        return season_rewards_preview(season=season, offset=0, limit=0)
    except Exception:  # noqa: BLE001 - see the docstring
        return None


def close_outcome(season: Season) -> str:
    """What closing `season` now would do, as the close-now page says it: how many players its
    archive would hold and how many of them its reward tiers would pay."""
    if season.state == SeasonState.CLOSED:
        return f"{season}: closed already (left as it is)"
    preview = _preview_if_readable(season)
    if preview is None:
        return f"{season}: the standings cannot be read now, so how many players is unknown"
    rewarded = sum(outcome.players for outcome in preview.tiers)
    return (
        f"{season}: {counted(preview.players, 'player')} archived, "
        f"{counted(rewarded, 'player')} rewarded"
    )


def tiers_paying_no_one(board: Board) -> list[str]:
    """Warnings for the board's reward tiers that would pay no one if its running season closed
    now (their ranks won by a tier before them, or past the last player)."""
    season = season_current(board=board)
    if season is None or not board.reward_tiers.exists():
        return []
    preview = _preview_if_readable(season)
    if preview is None:
        return []
    return [
        f"Reward tier '{outcome.tier.reward_code}' would pay no one if {season.name} closed now "
        f"({counted(preview.players, 'player')}): "
        + (
            "its ranks go to a tier before it."
            if outcome.covers is not None
            else "the board has fewer players than its first rank."
        )
        for outcome in preview.tiers
        if not outcome.gets
    ]
