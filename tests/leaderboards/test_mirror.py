"""The mirror from PostgreSQL into the season's ZSET: idempotent, order-insensitive, repairable."""

from datetime import timedelta

import pytest
from django.db.models import F

from leaderboards import services, store
from leaderboards.scoring import composite_for
from matches.models import PlayerTotal
from tests.factories import BoardFactory, PlayerTotalFactory, SeasonFactory

pytestmark = pytest.mark.django_db


def expected_composite(total: PlayerTotal) -> int:
    return composite_for(
        points=total.points,
        reached_at=total.reached_at,
        season_starts_at=total.season.starts_at,
        lowest_first=total.season.board.lowest_first,
    )


def test_a_crash_between_commit_and_mirror_is_repaired_by_the_sweep(server, season):
    # given: results committed while the mirror never ran (no on-commit callbacks executed)
    server.post("/api/v1/scores", {"player_id": "p1", "points": 5, "match_id": "m1"}, format="json")
    server.post("/api/v1/scores", {"player_id": "p2", "points": 9, "match_id": "m1"}, format="json")
    assert store.board_size(season.id) == 0
    assert services.mirror_lag_seconds() >= 0
    assert PlayerTotal.objects.filter(mirrored_version__lt=F("version")).count() == 2

    # when
    mirrored = services.totals_mirror_pending()

    # then
    assert mirrored == 2
    assert store.scores_of(season.id, ["p1", "p2"]) == [
        expected_composite(t) for t in PlayerTotal.objects.order_by("player_id")
    ]
    assert PlayerTotal.objects.filter(mirrored_version__lt=F("version")).count() == 0
    assert services.totals_mirror_pending() == 0
    assert services.mirror_lag_seconds() == 0.0


def test_redelivered_mirror_tasks_change_nothing(post_scores, season):
    post_scores({"player_id": "p1", "points": 5, "match_id": "m1"})
    total = PlayerTotal.objects.get()
    before = store.scores_of(season.id, ["p1"])

    for _ in range(5):
        services.totals_mirror(total_ids=[total.id])

    assert store.scores_of(season.id, ["p1"]) == before == [expected_composite(total)]


def test_an_older_standing_arriving_late_never_moves_a_score_back(season):
    total = PlayerTotalFactory(season=season, points=50)
    services.totals_mirror(total_ids=[total.id])
    newest = store.scores_of(season.id, [total.player_id])[0]

    # A slow task that read the total when it was 20 writes after the newer one.
    store.write_standings(
        [
            store.StandingWrite(
                season.id,
                total.player_id,
                composite_for(
                    points=20,
                    reached_at=total.reached_at,
                    season_starts_at=season.starts_at,
                    lowest_first=False,
                ),
            )
        ]
    )

    assert store.scores_of(season.id, [total.player_id]) == [newest]


def test_out_of_order_tasks_end_at_the_newest_total(
    post_scores, server, season, django_capture_on_commit_callbacks
):
    # given: two results committed; their mirror tasks are held back
    with django_capture_on_commit_callbacks(execute=False) as first:
        server.post(
            "/api/v1/scores", {"player_id": "p1", "points": 5, "match_id": "m1"}, format="json"
        )
    with django_capture_on_commit_callbacks(execute=False) as second:
        server.post(
            "/api/v1/scores", {"player_id": "p1", "points": 7, "match_id": "m2"}, format="json"
        )

    # when: they run newest first, then oldest
    for callback in [*second, *first]:
        callback()

    # then
    total = PlayerTotal.objects.get()
    assert total.points == 12
    assert store.scores_of(season.id, ["p1"]) == [expected_composite(total)]


def test_lowest_first_sum_boards_mirror_in_the_worsening_direction(post_scores, db):
    board = BoardFactory(slug="golf", sort_order="lowest_first")
    season = SeasonFactory(board=board)
    post_scores({"player_id": "p1", "points": 70, "match_id": "r1", "board": "golf"})
    post_scores({"player_id": "p1", "points": 72, "match_id": "r2", "board": "golf"})

    total = PlayerTotal.objects.get()
    assert total.points == 142
    assert store.scores_of(season.id, ["p1"]) == [expected_composite(total)]


def test_the_rebuild_agrees_with_the_mirror(season):
    other = BoardFactory(slug="speedrun", sort_order="lowest_first", score_operator="best")
    runs = SeasonFactory(board=other)
    totals = [
        PlayerTotalFactory(
            season=s, points=points, reached_at=s.starts_at + timedelta(seconds=offset)
        )
        for s in (season, runs)
        for points, offset in ((10, 5), (10, 3), (99, 86_000), (1, 0))
    ]
    services.totals_mirror(total_ids=[t.id for t in totals])
    mirrored = {s.id: store.read_page(s.id, offset=0, limit=10)[1] for s in (season, runs)}

    for s in (season, runs):
        store.delete_standings(s.id)
        size = services.season_rebuild_standings(season=s)
        assert size == 4
        assert store.read_page(s.id, offset=0, limit=10)[1] == mirrored[s.id]


def test_a_rebuild_replaces_a_corrupted_board_atomically(season):
    totals = PlayerTotalFactory.create_batch(3, season=season)
    store.write_standings([store.StandingWrite(season.id, "ghost", 10**15)])
    store.write_standings([store.StandingWrite(season.id, totals[0].player_id, 10**15)])

    size = services.season_rebuild_standings(season=season)

    assert size == 3
    assert store.scores_of(season.id, ["ghost"]) == [None]
    assert store.scores_of(season.id, [t.player_id for t in totals]) == [
        expected_composite(t) for t in totals
    ]


def test_rebuilding_an_empty_season_removes_its_key(season):
    store.write_standings([store.StandingWrite(season.id, "ghost", 10**15)])

    assert services.season_rebuild_standings(season=season) == 0
    assert not store.standings_exist(season.id)
