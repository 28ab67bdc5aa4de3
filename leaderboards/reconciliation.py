"""Reconciliation: find and repair every difference between PostgreSQL's totals and the ZSETs.

Each run checks the players whose totals changed recently and one more page of a walk through
the whole season, so over time every entry is checked. Repairs are compare-and-set, so a repair
never overwrites a newer score the mirror wrote meanwhile. Drift is zero in normal operation;
when it is not, it is logged and recorded (and exported as a metric).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import QuerySet
from django.utils import timezone

from matches.models import PlayerTotal
from seasons.models import Season, SeasonState, SortOrder

from . import store
from .models import ReconciliationRun
from .scoring import composite_for

logger = logging.getLogger(__name__)

RECENT = timedelta(minutes=10)
WALK_PAGE = 5000
CHUNK = 1000


@dataclass
class Tally:
    checked: int = 0
    drift: int = 0
    fixed: int = 0


def _check(season: Season, totals: QuerySet[PlayerTotal], tally: Tally) -> str:
    """Compare the totals with the ZSET and repair; returns the last player_id checked.

    Redis is read before PostgreSQL: a mirror write landing in between makes the repair's
    compare-and-set fail instead of moving a score back. Totals not mirrored yet are lag for
    the sweep, not drift.
    """
    lowest_first = season.board.sort_order == SortOrder.LOWEST_FIRST
    player_ids = list(totals.values_list("player_id", flat=True))
    for start in range(0, len(player_ids), CHUNK):
        chunk = player_ids[start : start + CHUNK]
        stored = dict(zip(chunk, store.scores_of(season.pk, chunk), strict=True))
        rows = PlayerTotal.objects.filter(season=season, player_id__in=chunk).values_list(
            "player_id",
            "points",
            "reached_at",
            "player__banned_at",
            "version",
            "mirrored_version",
        )
        for player_id, points, reached_at, banned_at, version, mirrored_version in rows:
            if mirrored_version < version:
                continue
            expected = (
                None
                if banned_at is not None
                else composite_for(
                    points=points,
                    reached_at=reached_at,
                    season_starts_at=season.starts_at,
                    lowest_first=lowest_first,
                )
            )
            tally.checked += 1
            current = stored[player_id]
            if current == expected:
                continue
            tally.drift += 1
            if store.compare_and_set(season.pk, player_id, expected=current, composite=expected):
                tally.fixed += 1
            logger.warning(
                "drift in season %s for %s: redis %s, postgres %s",
                season.pk,
                player_id,
                current,
                expected,
            )
    return player_ids[-1] if player_ids else ""


def season_reconcile(*, season: Season, now: datetime | None = None) -> Tally:
    now = now or timezone.now()
    all_totals = PlayerTotal.objects.filter(season=season)

    recent = Tally()
    _check(season, all_totals.filter(updated_at__gte=now - RECENT), recent)
    _record(season, ReconciliationRun.Kind.RECENT, recent, now)

    walk = Tally()
    page = all_totals.filter(player_id__gt=season.reconcile_cursor).order_by("player_id")
    last = _check(season, page[:WALK_PAGE], walk)
    if page[WALK_PAGE - 1 : WALK_PAGE].count() == 0:
        # The walk reached the end of the season: look for members PostgreSQL does not know
        # (they have no total to compare against), then start over.
        walk.drift += _remove_strangers(season, all_totals, walk)
        last = ""
    Season.objects.filter(pk=season.pk).update(reconcile_cursor=last)
    season.reconcile_cursor = last
    _record(season, ReconciliationRun.Kind.WALK, walk, now)
    return Tally(
        recent.checked + walk.checked, recent.drift + walk.drift, recent.fixed + walk.fixed
    )


def _remove_strangers(season: Season, totals: QuerySet[PlayerTotal], tally: Tally) -> int:
    expected = totals.filter(player__banned_at__isnull=True).count()
    if store.board_size(season.pk) == expected:
        return 0
    strangers = 0
    for page in store.iter_standings(season.pk, page_size=CHUNK):
        known = set(
            totals.filter(player_id__in=[s.player_id for s in page]).values_list(
                "player_id", flat=True
            )
        )
        for standing in page:
            if standing.player_id not in known:
                strangers += 1
                if store.compare_and_set(
                    season.pk, standing.player_id, expected=standing.composite, composite=None
                ):
                    tally.fixed += 1
    if strangers:
        logger.warning("season %s: removed %d players unknown to PostgreSQL", season.pk, strangers)
    return strangers


def _record(season: Season, kind: str, tally: Tally, started_at: datetime) -> None:
    ReconciliationRun.objects.create(
        season=season,
        kind=kind,
        checked=tally.checked,
        drift=tally.drift,
        fixed=tally.fixed,
        started_at=started_at,
        finished_at=timezone.now(),
    )


def _live_seasons() -> Iterable[Season]:
    return Season.objects.exclude(state=SeasonState.CLOSED).select_related("board")


def seasons_reconcile(*, now: datetime | None = None) -> int:
    """Reconcile every season not closed yet; returns the drift found."""
    drift = 0
    for season in _live_seasons():
        drift += season_reconcile(season=season, now=now).drift
    ReconciliationRun.objects.filter(finished_at__lt=timezone.now() - timedelta(days=7)).delete()
    return drift
