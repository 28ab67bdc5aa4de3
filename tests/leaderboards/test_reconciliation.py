"""Reconciliation finds every difference between Redis and PostgreSQL and repairs it."""

import pytest

from leaderboards import reconciliation, store
from leaderboards.models import ReconciliationRun
from matches.models import Player, PlayerTotal
from tests.factories import PlayerTotalFactory

pytestmark = pytest.mark.django_db


def expected(total):
    from leaderboards.scoring import composite_for

    return composite_for(
        points=total.points,
        reached_at=total.reached_at,
        season_starts_at=total.season.starts_at,
        lowest_first=False,
    )


@pytest.fixture
def mirrored(season):
    from leaderboards.services import totals_mirror

    totals = PlayerTotalFactory.create_batch(
        6, season=season, points=10, version=1, mirrored_version=1
    )
    totals_mirror(total_ids=[t.id for t in totals])
    return totals


def test_no_drift_in_normal_operation(season, mirrored):
    tally = reconciliation.season_reconcile(season=season)

    assert (tally.checked, tally.drift, tally.fixed) == (12, 0, 0)
    assert set(ReconciliationRun.objects.values_list("kind", "drift")) == {
        ("recent", 0),
        ("walk", 0),
    }


def test_wrong_missing_stranger_and_banned_entries_are_repaired(season, mirrored):
    wrong, missing, banned = mirrored[0], mirrored[1], mirrored[2]
    store.write_standings([store.StandingWrite(season.pk, wrong.player_id, 2**50)])
    store.remove_players(season.pk, [missing.player_id])
    store.write_standings([store.StandingWrite(season.pk, "stranger", 2**40)])
    Player.objects.filter(player_id=banned.player_id).update(banned_at=banned.updated_at)
    PlayerTotal.objects.update(updated_at=banned.updated_at.replace(year=2020))  # walk only

    tally = reconciliation.season_reconcile(season=season)

    assert (tally.drift, tally.fixed) == (4, 4)
    assert store.scores_of(
        season.pk, [wrong.player_id, missing.player_id, banned.player_id, "stranger"]
    ) == [expected(wrong), expected(missing), None, None]
    assert reconciliation.season_reconcile(season=season).drift == 0


def test_unmirrored_totals_are_lag_not_drift(season, mirrored):
    PlayerTotal.objects.filter(pk=mirrored[0].pk).update(points=99, version=2)

    tally = reconciliation.season_reconcile(season=season)

    assert tally.drift == 0
    assert store.scores_of(season.pk, [mirrored[0].player_id]) == [expected(mirrored[0])]


def test_the_walk_resumes_where_it_stopped(season, mirrored, monkeypatch):
    monkeypatch.setattr(reconciliation, "WALK_PAGE", 4)
    PlayerTotal.objects.update(updated_at=mirrored[0].updated_at.replace(year=2020))

    reconciliation.season_reconcile(season=season)
    season.refresh_from_db()
    assert season.reconcile_cursor == sorted(t.player_id for t in mirrored)[3]
    reconciliation.season_reconcile(season=season)
    season.refresh_from_db()

    walks = ReconciliationRun.objects.filter(kind="walk").order_by("started_at", "id")
    assert [w.checked for w in walks] == [4, 2]
    assert season.reconcile_cursor == ""
