"""Test helpers: the composite PostgreSQL's totals stand for, and writing totals made by
factories (which bypass the write path and its outbox) into the mirror."""

from __future__ import annotations

from collections.abc import Iterable

from leaderboards import store
from matches.models import PlayerTotal
from seasons.scoring import composite_for


def expected_composite(total: PlayerTotal) -> int:
    return composite_for(
        points=total.points,
        reached_at=total.reached_at,
        season_starts_at=total.season.starts_at,
        lowest_first=total.season.board.lowest_first,
    )


def mirror_totals(totals: Iterable[PlayerTotal]) -> int:
    return store.write_standings(
        store.StandingWrite(
            season_id=total.season_id,
            player_id=total.player_id,
            composite=expected_composite(total),
            worsening=total.season.board.standings_worsen,
            shards=total.season.shards,
        )
        for total in totals
    )
