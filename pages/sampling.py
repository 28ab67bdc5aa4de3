"""Rank sampling for the players' rank charts: every few minutes, the rank of each player who
played in the last interval, read from the live ZSET in one round trip per chunk.

Only players whose total changed are sampled, so the cost follows activity, not board size, and
is capped per season and run. A player's chart therefore has a point for each interval they
played in (their rank when it ended) and the page adds their live rank as the last point.
Samples are keyed by the interval's start, so a retried or doubled run writes nothing twice.
Samples of closed seasons are pruned in bounded batches.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from django.utils import timezone

from leaderboards import store
from leaderboards.selectors import standings_whole_required
from matches.models import MatchResult
from seasons.models import Season, SeasonState
from seasons.scoring import points_of

from .models import RankSample

logger = logging.getLogger(__name__)

SAMPLE_INTERVAL = timedelta(minutes=5)
# Players one run samples per season at most (the most recently active first).
MAX_PLAYERS_PER_SEASON = 10_000
# Players ranked in one store.read_many call (one Lua script, one round trip).
READ_CHUNK = 500
# Samples of closed seasons one run deletes at most.
PRUNE_BATCH = 10_000


def sampling_instant(now: datetime) -> datetime:
    """The start of the sampling interval that holds `now`."""
    step = int(SAMPLE_INTERVAL.total_seconds())
    epoch = int(now.timestamp())
    return datetime.fromtimestamp(epoch - epoch % step, tz=UTC)


def rank_samples_take(*, now: datetime | None = None) -> int:
    """Sample the players of every running season who played since the previous instant."""
    now = now or timezone.now()
    instant = sampling_instant(now)
    since = instant - SAMPLE_INTERVAL
    seasons = Season.objects.filter(
        state=SeasonState.OPEN, starts_at__lte=now, ends_at__gt=now
    ).select_related("board")
    taken = 0
    for season in seasons:
        try:
            taken += _sample_season(season, instant=instant, since=since)
        except Exception:
            logger.exception("sampling the ranks of season %s failed", season.pk)
    return taken


def _sample_season(season: Season, *, instant: datetime, since: datetime) -> int:
    # Who played: read from the results' arrival times (a BRIN index), since no index on the
    # totals may cover a column that changes (see matches.models.PlayerTotal).
    player_ids = list(
        MatchResult.objects.filter(season=season, received_at__gte=since)
        .values_list("player_id", flat=True)
        .distinct()[:MAX_PLAYERS_PER_SEASON]
    )
    lowest_first = season.board.lowest_first
    taken = 0
    for start in range(0, len(player_ids), READ_CHUNK):
        _, standings = store.read_many(
            season.pk,
            player_ids[start : start + READ_CHUNK],
            shards=season.shards,
            whole=standings_whole_required(season),
        )
        samples = [
            RankSample(
                season=season,
                player_id=standing.player_id,
                rank=standing.rank,
                points=points_of(standing.composite, lowest_first=lowest_first),
                sampled_at=instant,
            )
            # Players without a live standing (banned, not mirrored yet) have nothing to show.
            for standing in standings
            if standing is not None
        ]
        RankSample.objects.bulk_create(samples, ignore_conflicts=True)
        taken += len(samples)
    if player_ids:
        logger.info("sampled the ranks of %d players in season %s", taken, season.pk)
    return taken


def rank_samples_prune() -> int:
    """Delete up to PRUNE_BATCH samples of closed seasons (their charts are no longer shown)."""
    ids = list(
        RankSample.objects.filter(season__state=SeasonState.CLOSED).values_list("pk", flat=True)[
            :PRUNE_BATCH
        ]
    )
    if not ids:
        return 0
    deleted, _ = RankSample.objects.filter(pk__in=ids).delete()
    return deleted
