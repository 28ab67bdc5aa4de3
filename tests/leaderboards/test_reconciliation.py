"""Reconciliation finds every difference between Redis and PostgreSQL and repairs it."""

import pytest
from django.utils import timezone

from leaderboards import reconciliation, store
from leaderboards.models import ReconciliationRun
from matches.models import PendingStanding, Player, PlayerTotal
from tests.factories import PlayerTotalFactory
from tests.mirroring import mirror_totals

pytestmark = pytest.mark.django_db


def expected(total):
    from seasons.scoring import composite_for

    return composite_for(
        points=total.points,
        reached_at=total.reached_at,
        season_starts_at=total.season.starts_at,
        lowest_first=False,
    )


@pytest.fixture
def mirrored(season):
    totals = PlayerTotalFactory.create_batch(6, season=season, points=10)
    mirror_totals(totals)
    return totals


def test_no_drift_in_normal_operation(season, mirrored):
    tally = reconciliation.season_reconcile(season=season)

    # the walk checked all six; no results arrived recently, so the recent pass had none
    assert (tally.checked, tally.drift, tally.fixed) == (6, 0, 0)
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

    tally = reconciliation.season_reconcile(season=season)

    assert (tally.drift, tally.fixed) == (4, 4)
    assert store.scores_of(
        season.pk, [wrong.player_id, missing.player_id, banned.player_id, "stranger"]
    ) == [expected(wrong), expected(missing), None, None]
    assert reconciliation.season_reconcile(season=season).drift == 0


def test_unmirrored_totals_are_lag_not_drift(season, mirrored):
    # a total changed and committed with its outbox row, not mirrored yet
    PlayerTotal.objects.filter(pk=mirrored[0].pk).update(points=99)
    PendingStanding.objects.create(
        season=season, player_id=mirrored[0].player_id, composite=1, changed_at=timezone.now()
    )

    tally = reconciliation.season_reconcile(season=season)

    assert tally.drift == 0
    assert store.scores_of(season.pk, [mirrored[0].player_id]) == [expected(mirrored[0])]


def test_the_walk_resumes_where_it_stopped(season, mirrored, monkeypatch):
    monkeypatch.setattr(reconciliation, "WALK_PAGE", 4)

    reconciliation.season_reconcile(season=season)
    season.refresh_from_db()
    assert season.reconcile_cursor == sorted(t.player_id for t in mirrored)[3]
    reconciliation.season_reconcile(season=season)
    season.refresh_from_db()

    walks = ReconciliationRun.objects.filter(kind="walk").order_by("started_at", "id")
    assert [w.checked for w in walks] == [4, 2]
    assert season.reconcile_cursor == ""


def test_a_board_that_lost_most_of_its_players_is_rebuilt_whole_in_one_run(
    season, mirrored, monkeypatch
):
    # given: a walk of two players a run, and a board that kept one player of six (its Redis
    # restarted empty, then the mirror wrote that player's newer total)
    monkeypatch.setattr(reconciliation, "WALK_PAGE", 2)
    by_id = sorted(mirrored, key=lambda t: t.player_id)
    store.remove_players(season.pk, [t.player_id for t in by_id[:-1]])

    # when
    tally = reconciliation.season_reconcile(season=season)

    # then: the whole board is back, not a walk page of it, and the sample that showed the
    # loss is the run's record
    assert store.board_size(season.pk) == 6
    assert store.scores_of(season.pk, [t.player_id for t in by_id]) == [expected(t) for t in by_id]
    assert (tally.checked, tally.drift, tally.fixed) == (2, 2, 2)
    assert list(ReconciliationRun.objects.values_list("kind", "checked", "drift", "fixed")) == [
        ("walk", 2, 2, 2)
    ]
    assert reconciliation.season_reconcile(season=season).drift == 0


def test_the_recent_pass_checks_the_players_of_the_latest_results(post_scores, season):
    # given: two players with results, one of them drifted in Redis
    post_scores({"player_id": "a", "points": 5, "match_id": "m1"})
    post_scores({"player_id": "b", "points": 7, "match_id": "m1"})
    store.write_standings([store.StandingWrite(season.pk, "a", 2**50)])

    # when
    reconciliation.season_reconcile(season=season)

    # then
    recent = ReconciliationRun.objects.get(kind="recent")
    assert (recent.checked, recent.drift, recent.fixed) == (2, 1, 1)
    assert store.scores_of(season.pk, ["a"]) == [expected(PlayerTotal.objects.get(player_id="a"))]


def test_a_mirror_write_between_the_two_reads_is_not_drift(season, mirrored, monkeypatch):
    # given: the mirror writes a player's newer total right after reconciliation read Redis
    total = mirrored[0]
    real_scores_of = store.scores_of
    calls = []

    def scores_then_a_mirror_write(season_id, player_ids, **options):
        scores = real_scores_of(season_id, player_ids, **options)
        if not calls:
            PlayerTotal.objects.filter(pk=total.pk).update(points=50)
            total.points = 50
            mirror_totals([total])
        calls.append(player_ids)
        return scores

    monkeypatch.setattr(store, "scores_of", scores_then_a_mirror_write)

    # when
    tally = reconciliation.season_reconcile(season=season)

    # then
    assert tally.drift == 0
    assert real_scores_of(season.pk, [total.player_id]) == [expected(total)]


def test_strangers_are_found_by_a_scan_that_resumes_where_it_stopped(season, mirrored, monkeypatch):
    # given: a board with many members PostgreSQL does not know, and scans of a few at a time
    monkeypatch.setattr(reconciliation, "CHUNK", 10)
    monkeypatch.setattr(reconciliation, "STRANGER_SCAN", 10)
    store.write_standings(
        [store.StandingWrite(season.pk, f"stranger{i}", 2**40 + i) for i in range(300)]
    )

    # when: reconciliation runs until none is left, each run scanning a bounded stretch
    runs = 0
    while store.board_size(season.pk) > len(mirrored) and runs < 100:
        reconciliation.season_reconcile(season=season)
        runs += 1

    # then: every stranger went, over several runs, and the players PostgreSQL knows stayed
    assert runs > 1
    assert store.board_size(season.pk) == len(mirrored)
    assert store.scores_of(season.pk, [t.player_id for t in mirrored]) == [
        expected(t) for t in mirrored
    ]
