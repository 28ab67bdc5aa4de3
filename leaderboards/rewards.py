"""Which reward each final rank gets: one SQL rule that the close applies to the archive and the
admin's preview applies, without writing, to the live standings ("if the season closed now").

A top-percentage tier covers ranks 1 to ceil(percent / 100 × players): it rounds up, so a tier
always reaches at least one player (top 10% of 29 players is ranks 1-3; of 5 players, rank 1).
When several tiers match a rank, rank-range tiers win over percentage tiers; of two ranges, the
one starting highest (the larger `rank_from`: of 1-100 and 5-10, rank 7 gets 5-10), then the
one ending first; of two percentages, the smallest share.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection, transaction

from seasons.models import RewardTier, Season
from seasons.scoring import points_of
from webhooks.models import EventType
from webhooks.services import webhook_events_emit

from . import selectors, store
from .archive_rules import ARCHIVE_TABLES, ArchiveTables
from .models import SeasonReward

# Rewards told per `rewards.granted` event: a close of millions of players is told in pages.
REWARDS_PER_EVENT = 500

# The last rank a percentage tier reaches, over `players` ranked players.
_PERCENT_LAST_RANK = "ceil(t.top_percent / 100.0 * %(players)s)::bigint"

# Which tier of several matching ones a standing gets (see the module's docstring).
_TIER_ORDER = "t.top_percent IS NOT NULL, t.rank_from DESC, t.rank_to, t.top_percent, t.id"

# Each standing of `standings` (player_id, rank) with the one whole-board tier it gets, if any.
_REWARD_PER_STANDING = f"""
    SELECT DISTINCT ON (a.player_id) a.player_id, a.rank, t.id AS tier_id, t.reward_code
    FROM ({{standings}}) a
    JOIN seasons_rewardtier t ON t.board_id = %(board)s AND t.segment_dimension = '' AND (
        (t.rank_from IS NOT NULL AND a.rank BETWEEN t.rank_from AND t.rank_to)
        OR (t.top_percent IS NOT NULL AND a.rank <= {_PERCENT_LAST_RANK}))
    ORDER BY a.player_id, {_TIER_ORDER}
"""

# Each archived rank within a segment with the one tier of its dimension it gets, if any; a
# percentage is of the segment's players.
_SEGMENT_REWARDS = f"""
    INSERT INTO {{rewards}}
        (season_id, player_id, rank, reward_code, awarded_at, segment)
    SELECT DISTINCT ON (a.player_id, a.segment)
        %(season)s, a.player_id, a.rank, t.reward_code, %(now)s, a.segment
    FROM (SELECT player_id, rank, segment, count(*) OVER (PARTITION BY segment) AS players
          FROM {{segments}} WHERE season_id = %(season)s) a
    JOIN seasons_rewardtier t ON t.board_id = %(board)s AND t.segment_dimension <> 'clan'
        AND t.segment_dimension = split_part(a.segment, ':', 1) AND (
        (t.rank_from IS NOT NULL AND a.rank BETWEEN t.rank_from AND t.rank_to)
        OR (t.top_percent IS NOT NULL
            AND a.rank <= {_PERCENT_LAST_RANK.replace("%(players)s", "a.players")}))
    ORDER BY a.player_id, a.segment, {_TIER_ORDER}
"""

_ARCHIVE = "SELECT player_id, rank FROM {standings} WHERE season_id = %(season)s"
_GIVEN = "SELECT * FROM unnest(%(player_ids)s::text[], %(ranks)s::bigint[]) AS s(player_id, rank)"


# Each archived clan with the one clan tier it gets, if any (a percentage is of the clans).
_CLAN_TIERS = f"""
    SELECT DISTINCT ON (a.clan_id) a.clan_id, t.reward_code, t.members_too
    FROM (SELECT clan_id, rank, count(*) OVER () AS players
          FROM {{clans}} WHERE season_id = %(season)s) a
    JOIN seasons_rewardtier t ON t.board_id = %(board)s AND t.segment_dimension = 'clan' AND (
        (t.rank_from IS NOT NULL AND a.rank BETWEEN t.rank_from AND t.rank_to)
        OR (t.top_percent IS NOT NULL
            AND a.rank <= {_PERCENT_LAST_RANK.replace("%(players)s", "a.players")}))
    ORDER BY a.clan_id, {_TIER_ORDER}
"""
# The clans' rewards on the archive's rows, and to the members of a clan whose tier says so,
# each at their rank within the clan (the segment `clan:<id>`).
_CLAN_REWARDS = f"""
    WITH tiers AS ({_CLAN_TIERS}),
    given AS (
        UPDATE {{clans}} c SET reward_code = tiers.reward_code
        FROM tiers WHERE c.season_id = %(season)s AND c.clan_id = tiers.clan_id)
    INSERT INTO {{rewards}} (season_id, player_id, rank, reward_code, awarded_at, segment)
    SELECT %(season)s, s.player_id, s.rank, tiers.reward_code, %(now)s, s.segment
    FROM tiers JOIN {{segments}} s
      ON s.season_id = %(season)s AND s.segment = 'clan:' || tiers.clan_id
    WHERE tiers.members_too
"""


def season_rewards_award(*, season: Season, now: datetime) -> int:
    """The close's step: one reward per archived player from the whole board's tiers, and one
    per segment they are ranked in from its dimension's tiers, from the archive; idempotent.

    The rewards of a close that stopped after writing them are replaced, in one transaction:
    the resumed close snapshotted the archive again, and its ranks may have moved since (a ban
    or a void meanwhile), so the earlier rows are not this archive's and could hold the ranks
    its rewards need. The season is not closed until this step is done, so none was final."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM seasons_seasonreward WHERE season_id = %s", [season.pk])
        return rewards_rule_apply(
            cursor,
            season=season,
            tables=ARCHIVE_TABLES,
            players=season.archived_players or 0,
            now=now,
        )


def rewards_rule_apply(
    cursor: Any, *, season: Season, tables: ArchiveTables, players: int, now: datetime
) -> int:
    """The reward rule over an archive (`tables`, of `players` ranked players) whose rewards
    table holds none of the season yet: writes its rewards, and the clans' on its clan rows;
    returns how many rewards. The close applies it to the archive, a correction to its copy."""
    params = {"season": season.pk, "now": now, "board": season.board_id, "players": players}
    cursor.execute(
        tables.named(
            "INSERT INTO {rewards} (season_id, player_id, rank, reward_code, awarded_at)"
            " SELECT %(season)s, player_id, rank, reward_code, %(now)s FROM ("
            + _REWARD_PER_STANDING.format(standings=tables.named(_ARCHIVE))
            + ") r"
        ),
        params,
    )
    awarded = cursor.rowcount
    cursor.execute(tables.named(_SEGMENT_REWARDS), params)
    awarded += cursor.rowcount
    cursor.execute(
        tables.named("UPDATE {clans} SET reward_code = '' WHERE season_id = %(season)s"), params
    )
    cursor.execute(tables.named(_CLAN_REWARDS), params)
    return awarded + cursor.rowcount


def season_rewards_announce(*, season: Season) -> int:
    """Tell the webhooks of the season's rewards, in the close's last transaction (once the
    rewards are final): `rewards.granted` events of at most REWARDS_PER_EVENT rewards each, by
    segment (the whole board's first) and rank, so each reward is in exactly one page. Returns
    how many rewards."""
    rewards = SeasonReward.objects.filter(season=season).order_by("segment", "rank")
    total = rewards.count()
    pages = -(-total // REWARDS_PER_EVENT)

    def page_data() -> Iterator[dict[str, Any]]:
        page: list[dict[str, Any]] = []
        number = 0
        given = rewards.values_list("player_id", "rank", "reward_code", "segment")
        for player_id, rank, reward_code, segment in given.iterator(chunk_size=2000):
            reward = {"player_id": player_id, "rank": rank, "reward_code": reward_code}
            if segment:
                reward["segment"] = segment
            page.append(reward)
            if len(page) == REWARDS_PER_EVENT:
                number += 1
                yield _rewards_page(season, number, pages, page)
                page = []
        if page:
            yield _rewards_page(season, number + 1, pages, page)

    webhook_events_emit(
        event_type=EventType.REWARDS_GRANTED, data_pages=page_data(), board=season.board
    )
    return total


def _rewards_page(
    season: Season, page: int, pages: int, rewards: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "board": season.board.slug,
        "season": season.slug,
        "season_id": season.pk,
        "page": page,
        "pages": pages,
        "rewards": rewards,
    }


def _rewards_of(board_id: int, players: int, standings: list[tuple[str, int]]) -> dict[str, tuple]:
    """The rule applied to these (player_id, rank) pairs: player_id -> (tier_id, reward_code)."""
    if not standings:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            _REWARD_PER_STANDING.format(standings=_GIVEN),
            {
                "board": board_id,
                "players": players,
                "player_ids": [player_id for player_id, _ in standings],
                "ranks": [rank for _, rank in standings],
            },
        )
        return {player_id: (tier_id, code) for player_id, _, tier_id, code in cursor.fetchall()}


@dataclass(frozen=True, slots=True)
class TierOutcome:
    """One tier in the preview: the ranks it covers on its own and the ones it would get."""

    tier: RewardTier
    covers: tuple[int, int] | None  # first and last rank it reaches among the players, if any
    gets: list[tuple[int, int]] = field(default_factory=list)  # rank spans it wins

    @property
    def players(self) -> int:
        return sum(last - first + 1 for first, last in self.gets)


@dataclass(frozen=True, slots=True)
class PreviewRow:
    rank: int
    player_id: str
    points: int
    reward_code: str | None


@dataclass(frozen=True, slots=True)
class RewardsPreview:
    players: int
    tiers: list[TierOutcome]
    rows: list[PreviewRow]
    offset: int
    next_offset: int | None


def season_rewards_preview(*, season: Season, offset: int = 0, limit: int = 100) -> RewardsPreview:
    """Who would get which reward if the season closed now: the live standings (what the close
    would archive) through the close's own rule, written nowhere. Per tier, the rank spans it
    would win; and one page of players by rank with their reward.

    The winning tier changes only where a tier starts or ends, so the rule is asked at those
    ranks alone: a few queries whatever the size of the board."""
    players = store.board_size(season.pk, shards=season.shards)
    tiers = list(RewardTier.objects.filter(board_id=season.board_id))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT t.id, {_PERCENT_LAST_RANK} FROM seasons_rewardtier t"  # noqa: S608
            " WHERE t.board_id = %(board)s AND t.top_percent IS NOT NULL",
            {"board": season.board_id, "players": players},
        )
        percent_last = dict(cursor.fetchall())
    spans = {
        tier.pk: (1, percent_last[tier.pk])
        if tier.top_percent is not None
        else (
            tier.rank_from,
            tier.rank_to,
        )
        for tier in tiers
    }
    starts = sorted(
        {1}
        | {
            rank
            for first, last in spans.values()
            for rank in (first, last + 1)
            if 1 <= rank <= players
        }
    )
    segments = [
        (first, (starts[i + 1] - 1) if i + 1 < len(starts) else players)
        for i, first in enumerate(starts)
        if first <= players
    ]
    winners = _rewards_of(season.board_id, players, [(str(first), first) for first, _ in segments])
    outcomes = {
        tier.pk: TierOutcome(
            tier=tier,
            covers=(spans[tier.pk][0], min(spans[tier.pk][1], players))
            if spans[tier.pk][0] <= players and spans[tier.pk][1] >= 1
            else None,
        )
        for tier in tiers
    }
    for first, last in segments:
        won = winners.get(str(first))
        if won is not None:
            outcomes[won[0]].gets.append((first, last))

    _, page = store.read_page(
        season.pk,
        offset=offset,
        limit=limit + 1,
        competition=False,
        shards=season.shards,
        whole=selectors.standings_whole_required(season),
    )
    rewards = _rewards_of(season.board_id, players, [(s.player_id, s.rank) for s in page[:limit]])
    lowest_first = season.board.lowest_first
    rows = [
        PreviewRow(
            rank=s.rank,
            player_id=s.player_id,
            points=points_of(s.composite, lowest_first=lowest_first),
            reward_code=rewards.get(s.player_id, (None, None))[1],
        )
        for s in page[:limit]
    ]
    return RewardsPreview(
        players=players,
        tiers=list(outcomes.values()),
        rows=rows,
        offset=offset,
        next_offset=offset + limit if len(page) > limit else None,
    )
