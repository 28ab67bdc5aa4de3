"""What correcting a closed season's archive changes: the standings that move, the rewards
revoked, granted or changed, the clans; each as the preview shows it and the webhooks tell it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from seasons.models import Season


@dataclass(frozen=True, slots=True)
class Move:
    player_id: str
    old_rank: int | None  # None: new to the archive
    new_rank: int | None  # None: removed from it
    old_points: int | None
    new_points: int | None

    def as_data(self) -> dict[str, Any]:
        return {
            "player_id": self.player_id,
            "old_rank": self.old_rank,
            "new_rank": self.new_rank,
            "old_points": self.old_points,
            "new_points": self.new_points,
        }


@dataclass(frozen=True, slots=True)
class RewardChange:
    player_id: str
    segment: str  # "" for the whole board's tiers
    old_rank: int | None
    old_reward_code: str | None  # None: none before (granted)
    new_rank: int | None
    new_reward_code: str | None  # None: none now (revoked)

    @property
    def kind(self) -> str:
        if self.old_reward_code is None:
            return "granted"
        if self.new_reward_code is None:
            return "revoked"
        return "changed" if self.old_reward_code != self.new_reward_code else "re-ranked"

    def as_data(self) -> dict[str, Any]:
        """As a game backend acts on it: the player, the tier's segment and reward code."""
        segment = {"segment": self.segment} if self.segment else {}
        if self.kind == "granted":
            return {
                "player_id": self.player_id,
                **segment,
                "rank": self.new_rank,
                "reward_code": self.new_reward_code,
            }
        if self.kind == "revoked":
            return {
                "player_id": self.player_id,
                **segment,
                "rank": self.old_rank,
                "reward_code": self.old_reward_code,
            }
        return {
            "player_id": self.player_id,
            **segment,
            "old_rank": self.old_rank,
            "new_rank": self.new_rank,
            "old_reward_code": self.old_reward_code,
            "new_reward_code": self.new_reward_code,
        }


@dataclass(frozen=True, slots=True)
class ClanChange:
    clan_id: str
    old_rank: int | None
    new_rank: int | None
    old_points: int | None
    new_points: int | None
    old_members: int | None
    new_members: int | None
    old_reward_code: str | None
    new_reward_code: str | None

    def as_data(self) -> dict[str, Any]:
        return {
            "clan_id": self.clan_id,
            "old_rank": self.old_rank,
            "new_rank": self.new_rank,
            "old_points": self.old_points,
            "new_points": self.new_points,
            "old_members": self.old_members,
            "new_members": self.new_members,
            "old_reward_code": self.old_reward_code or None,
            "new_reward_code": self.new_reward_code or None,
        }


@dataclass(frozen=True, slots=True)
class ArchiveCorrection:
    """What correcting the season's archive changes (or changed, once applied)."""

    season: Season
    players_before: int
    players_after: int
    moved: int  # standings that change: moved, removed, added, or their points changed
    segment_rows: int
    rewards: dict[str, int]  # per kind: revoked, granted, changed, re-ranked
    reward_changes: list[RewardChange]  # the first LISTED, re-ranked ones left out
    clan_changes: list[ClanChange]  # the first LISTED
    moves: list[Move]  # one page, from `offset`
    offset: int
    next_offset: int | None
    applied_at: datetime | None = None
    summary: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "summary",
            {
                "players_before": self.players_before,
                "players_after": self.players_after,
                "moves": self.moved,
                "rewards_revoked": self.rewards.get("revoked", 0),
                "rewards_granted": self.rewards.get("granted", 0),
                "rewards_changed": self.rewards.get("changed", 0),
                "rewards_reranked": self.rewards.get("re-ranked", 0),
                "clans_changed": len(self.clan_changes),
                "segment_rows_changed": self.segment_rows,
            },
        )

    @property
    def changes_nothing(self) -> bool:
        return not (self.moved or self.segment_rows or sum(self.rewards.values()) or self.clans)

    @property
    def clans(self) -> int:
        return len(self.clan_changes)
