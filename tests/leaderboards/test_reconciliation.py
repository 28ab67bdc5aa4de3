"""Reconciliation finds every difference between Redis and PostgreSQL and repairs it."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from leaderboards import reconciliation, store
from leaderboards.models import ReconciliationRun
from matches.models import MatchResult, PendingStanding, Player, PlayerTotal
from seasons.models import Season
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
        standings={str(season.pk): [["someone-else", 5], [mirrored[0].player_id, 1]]},
        changed_at=timezone.now(),
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


def test_a_larger_board_is_walked_in_the_same_number_of_runs(season, mirrored, monkeypatch):
    # given: pages of at least one player, and a walk of every board in three runs
    monkeypatch.setattr(reconciliation, "WALK_PAGE", 1)
    monkeypatch.setattr(reconciliation, "WALK_RUNS", 3)

    for _ in range(3):
        reconciliation.season_reconcile(season=season)
        season.refresh_from_db()

    # then: six players, two a run: the third run reached the last of them
    walks = ReconciliationRun.objects.filter(kind="walk").order_by("started_at", "id")
    assert [w.checked for w in walks] == [2, 2, 2]
    assert season.reconcile_cursor == max(t.player_id for t in mirrored)


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


def _recent_runs():
    return list(
        ReconciliationRun.objects.filter(kind="recent")
        .order_by("id")
        .values_list("checked", "drift", "fixed")
    )


def test_a_confirmed_write_redis_lost_since_the_last_pass_is_found_and_repaired_in_one_run(
    post_scores, season, monkeypatch
):
    # given: the last completed pass 12 minutes ago (beat was away since), then a's new total
    # confirmed and mirrored 11 minutes ago: its outbox row is gone
    long_ago = timezone.now() - timedelta(minutes=12)
    post_scores({"player_id": "a", "points": 5, "match_id": "m1"})
    post_scores({"player_id": "b", "points": 7, "match_id": "m1"})
    MatchResult.objects.update(received_at=long_ago - timedelta(minutes=1))
    reconciliation.season_reconcile(season=season, now=long_ago)
    older = store.scores_of(season.pk, ["a"])[0]
    post_scores({"player_id": "a", "points": 9, "match_id": "m2"})
    MatchResult.objects.filter(match_id="m2").update(received_at=long_ago + timedelta(minutes=1))
    newer = expected(PlayerTotal.objects.get(player_id="a"))
    assert PendingStanding.objects.count() == 0
    # Redis comes back from an AOF written every second without that write: a's older score,
    # the whole marker kept
    assert store.compare_and_set(season.pk, "a", expected=newer, composite=older)
    assert store.standings_whole(season.pk)
    # and the walk is elsewhere this run
    monkeypatch.setattr(reconciliation, "WALK_PAGE", 1)
    Season.objects.filter(pk=season.pk).update(reconcile_cursor="a")
    season.refresh_from_db()

    # when
    reconciliation.season_reconcile(season=season)

    # then: found by the recent pass, which covers every total changed since the last pass
    assert _recent_runs()[-1] == (1, 1, 1)
    assert store.scores_of(season.pk, ["a"]) == [newer]


def test_a_redis_gone_back_in_time_takes_the_recent_pass_back_with_it(post_scores, season):
    # given: a pass, a's new total mirrored, and a second pass that checked it
    post_scores({"player_id": "a", "points": 5, "match_id": "m1"})
    reconciliation.season_reconcile(season=season)
    first_point = store.checked_through(season.pk)
    older = store.scores_of(season.pk, ["a"])[0]
    post_scores({"player_id": "a", "points": 9, "match_id": "m2"})
    reconciliation.season_reconcile(season=season)
    newer = expected(PlayerTotal.objects.get(player_id="a"))
    assert store.checked_through(season.pk) > first_point
    # when: a replica promoted from before the write (and so before the second pass) has a's
    # older score and the point the first pass left
    assert store.compare_and_set(season.pk, "a", expected=newer, composite=older)
    store.checked_through_set(season.pk, first_point)

    reconciliation.season_reconcile(season=season)

    # then
    assert _recent_runs()[-1] == (1, 1, 1)
    assert store.scores_of(season.pk, ["a"]) == [newer]


def test_the_recent_pass_covers_every_total_changed_since_the_last_one_however_many(season):
    # given: a completed pass, then 20,001 players' results and totals committed and mirrored,
    # and the player of the oldest of them drifted in Redis
    reconciliation.season_reconcile(season=season)
    n = 20_001
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO matches_player
                (player_id, display_name, avatar_url, ban_reason, created_at, updated_at)
            SELECT 'p' || i, '', '', '', now(), now() FROM generate_series(1, %(n)s) i;
            INSERT INTO matches_matchresult (board_id, season_id, match_id, player_id, points,
                                             ended_at, received_at, counted)
            SELECT %(board)s, %(season)s, 'm', 'p' || i, 10, now(), now(), true
            FROM generate_series(1, %(n)s) i ORDER BY i;
            INSERT INTO matches_playertotal (season_id, player_id, points, reached_at, updated_at)
            SELECT %(season)s, 'p' || i, 10, now(), now() FROM generate_series(1, %(n)s) i;
            """,
            {"n": n, "board": season.board_id, "season": season.pk},
        )
    mirror_totals(PlayerTotal.objects.filter(season=season).select_related("season__board"))
    oldest = MatchResult.objects.filter(season=season).order_by("id").first().player_id
    store.write_standings([store.StandingWrite(season.pk, oldest, 2**50)])

    # when
    reconciliation.season_reconcile(season=season)

    # then: every one checked by the recent pass, and the drifted one repaired
    assert _recent_runs()[-1] == (n, 1, 1)
    assert store.scores_of(season.pk, [oldest]) == [
        expected(PlayerTotal.objects.get(season=season, player_id=oldest))
    ]


def test_a_season_last_checked_too_long_ago_is_rebuilt_and_checked_from_then(season, mirrored):
    # given: a point left two hours ago (reconciliation stopped, or a Redis restored from an old
    # copy), and a drifted entry
    two_hours_ago = (timezone.now() - timedelta(hours=2)).timestamp()
    store.checked_through_set(season.pk, two_hours_ago)
    store.write_standings([store.StandingWrite(season.pk, mirrored[0].player_id, 2**50)])

    # when
    started = timezone.now().timestamp()
    reconciliation.season_reconcile(season=season)

    # then: rebuilt from PostgreSQL, and the next run starts from the rebuild
    assert store.scores_of(season.pk, [t.player_id for t in mirrored]) == [
        expected(t) for t in mirrored
    ]
    assert list(ReconciliationRun.objects.values_list("kind", flat=True)) == ["walk"]
    assert store.checked_through(season.pk) >= started
