"""The mirror from PostgreSQL into the season's ZSET: idempotent, order-insensitive, repairable."""

from datetime import timedelta

import orjson
import pytest
from django.utils import timezone

from leaderboards import player_refreshes, services, snapshots, store, tasks
from matches import services as match_services
from matches.models import PendingStanding, PlayerTotal
from seasons.scoring import composite_for
from tests.factories import BoardFactory, PlayerTotalFactory, SeasonFactory
from tests.mirroring import expected_composite, mirror_totals

pytestmark = pytest.mark.django_db


def test_a_crash_between_commit_and_mirror_is_repaired_by_the_sweep(server, season):
    # given: results committed while the mirror never ran (no on-commit callbacks executed)
    server.post("/api/v1/scores", {"player_id": "p1", "points": 5, "match_id": "m1"}, format="json")
    server.post("/api/v1/scores", {"player_id": "p2", "points": 9, "match_id": "m1"}, format="json")
    assert store.board_size(season.id) == 0
    assert services.mirror_lag_seconds() >= 0
    assert PendingStanding.objects.count() == 2
    # the sweep leaves standings this young to the tasks queued for them
    assert services.totals_mirror_pending() == 0

    # when: the sweep runs once they are older
    mirrored = services.totals_mirror_pending(older_than=timedelta(0))

    # then
    assert mirrored == 2
    assert store.scores_of(season.id, ["p1", "p2"]) == [
        expected_composite(t) for t in PlayerTotal.objects.order_by("player_id")
    ]
    assert PendingStanding.objects.count() == 0
    assert services.totals_mirror_pending(older_than=timedelta(0)) == 0
    assert services.mirror_lag_seconds() == 0.0


def test_a_batch_on_two_boards_leaves_one_outbox_row_per_scoring_rule_with_every_standing(
    server, season
):
    # given: a best-score board beside the running sum board
    best = SeasonFactory(board=BoardFactory(slug="speed", score_operator="best"))
    body = [
        {"player_id": "p1", "points": 5, "match_id": "m1"},
        {"player_id": "p2", "points": 9, "match_id": "m1"},
        {"player_id": "p1", "points": 4, "match_id": "m2"},
        {"board": "speed", "player_id": "p1", "points": 7, "match_id": "m1"},
    ]

    # when: committed, with the mirror never run
    assert server.post("/api/v1/scores", body, format="json").status_code == 200

    # then: one row for the sums and one for the bests, holding each new standing once
    rows = [row.season_standings() for row in PendingStanding.objects.order_by("pk")]
    totals = {(t.season_id, t.player_id): t for t in PlayerTotal.objects.all()}
    assert [sorted(row) for row in rows] == [[season.pk], [best.pk]]
    assert rows[0][season.pk] == [
        ("p1", expected_composite(totals[season.pk, "p1"])),
        ("p2", expected_composite(totals[season.pk, "p2"])),
    ]
    assert rows[1][best.pk] == [("p1", expected_composite(totals[best.pk, "p1"]))]


def test_the_sweep_takes_whole_outbox_rows_and_a_close_takes_the_rows_of_its_season(server, season):
    other = SeasonFactory(board=BoardFactory(slug="speed"))
    batch = [{"player_id": f"p{i}", "points": i, "match_id": "m1"} for i in range(1, 4)]
    server.post("/api/v1/scores", batch, format="json")
    server.post(
        "/api/v1/scores",
        {"board": "speed", "player_id": "q", "points": 1, "match_id": "m1"},
        format="json",
    )

    # a season's sweep (as its close runs it) leaves the other season's row alone
    assert services.totals_mirror_pending(season=season, older_than=timedelta(0), limit=1) == 3
    assert store.board_size(season.pk) == 3
    assert store.board_size(other.pk) == 0
    (left,) = PendingStanding.objects.all()
    assert left.season_standings() == {
        other.pk: [("q", expected_composite(PlayerTotal.objects.get(player_id="q")))]
    }

    assert services.totals_mirror_pending(older_than=timedelta(0)) == 1
    assert store.board_size(other.pk) == 1
    assert PendingStanding.objects.count() == 0


def test_redelivered_mirror_tasks_change_nothing(
    server, season, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as mirror:
        server.post(
            "/api/v1/scores", {"player_id": "p1", "points": 5, "match_id": "m1"}, format="json"
        )
    total = PlayerTotal.objects.get()

    for _ in range(5):
        for callback in mirror:
            callback()

    assert store.scores_of(season.id, ["p1"]) == [expected_composite(total)]
    assert PendingStanding.objects.count() == 0


@pytest.mark.parametrize("form", ["json text", "list of an earlier release"])
def test_the_mirror_task_takes_its_standings_in_either_message_form(
    server, season, django_capture_on_commit_callbacks, form
):
    with django_capture_on_commit_callbacks(execute=False):
        server.post(
            "/api/v1/scores", {"player_id": "p1", "points": 5, "match_id": "m1"}, format="json"
        )
    (pending,) = PendingStanding.objects.all()
    ((player_id, composite),) = pending.season_standings()[season.id]
    message = [[pending.id, season.id, player_id, composite, False]]

    written = tasks.mirror_standings(
        orjson.dumps(message).decode() if form == "json text" else message
    )

    assert written == 1
    assert store.scores_of(season.id, ["p1"]) == [composite]
    assert PendingStanding.objects.count() == 0


def test_an_older_standing_arriving_late_never_moves_a_score_back(season):
    total = PlayerTotalFactory(season=season, points=50)
    mirror_totals([total])
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
    mirror_totals(totals)
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


@pytest.mark.parametrize("score_operator", ["sum", "best"])
@pytest.mark.parametrize("sort_order", ["highest_first", "lowest_first"])
def test_the_write_path_computes_the_same_composite_as_python(
    post_scores, db, score_operator, sort_order
):
    # given: a board of each rule, and results reached at different moments of the season
    season = SeasonFactory(
        board=BoardFactory(slug="b", score_operator=score_operator, sort_order=sort_order)
    )
    for match, (player, points, seconds) in enumerate(
        [("p1", 30, 0), ("p1", 20, 3601), ("p2", 7, 59.9), ("p3", 536_870_000, 86_399)]
    ):
        ended_at = season.starts_at + timedelta(seconds=seconds)
        post_scores(
            {
                "player_id": player,
                "points": points,
                "match_id": f"m{match}",
                "board": "b",
                "ended_at": ended_at.isoformat(),
            }
        )

    # then: the score each total stands for, computed in SQL, is what Python computes
    totals = list(PlayerTotal.objects.filter(season=season).order_by("player_id"))
    assert store.scores_of(season.id, [t.player_id for t in totals]) == [
        expected_composite(t) for t in totals
    ]


def test_a_ban_between_commit_and_mirror_keeps_the_player_off_the_board(
    server, season, django_capture_on_commit_callbacks
):
    # given: a result committed, its mirror task not run yet
    with django_capture_on_commit_callbacks(execute=False) as mirror:
        server.post(
            "/api/v1/scores", {"player_id": "cheat", "points": 5, "match_id": "m1"}, format="json"
        )
    # when: the player is banned (its refresh runs), then the late mirror task runs
    with django_capture_on_commit_callbacks(execute=True):
        match_services.player_ban(player_id="cheat", reason="aimbot")
    for callback in mirror:
        callback()

    # then: not on the board, and nothing left pending that would stall readiness
    assert store.scores_of(season.id, ["cheat"]) == [None]
    assert PendingStanding.objects.count() == 0
    assert services.mirror_lag_seconds() == 0.0


def test_pending_standings_of_banned_players_are_swept_away(server, season):
    # given: a result committed whose task was lost, then a ban
    server.post(
        "/api/v1/scores", {"player_id": "cheat", "points": 5, "match_id": "m1"}, format="json"
    )
    match_services.player_ban(player_id="cheat", reason="aimbot")

    # when
    services.totals_mirror_pending(older_than=timedelta(0))

    # then
    assert store.scores_of(season.id, ["cheat"]) == [None]
    assert PendingStanding.objects.count() == 0


def test_a_result_mirrored_during_a_rebuild_survives_the_swap(post_scores, season):
    # given: a board with one player, and a rebuild that reads PostgreSQL before a new result
    post_scores({"player_id": "p1", "points": 5, "match_id": "m1"})
    snapshot = list(snapshots.season_composites(season))

    def chunks_then_a_new_result():
        post_scores({"player_id": "p2", "points": 9, "match_id": "m1"})
        post_scores({"player_id": "p1", "points": 4, "match_id": "m2"})
        return iter(snapshot)

    # when
    size = store.rebuild_standings(season.id, chunks_then_a_new_result, worsening=False)

    # then: the swap kept both the new player and p1's newer total
    totals = list(PlayerTotal.objects.order_by("player_id"))
    assert size == 2
    assert store.scores_of(season.id, ["p1", "p2"]) == [expected_composite(t) for t in totals]
    assert [t.points for t in totals] == [9, 9]


def test_a_ban_during_a_rebuild_is_not_undone_by_the_swap(post_scores, season):
    post_scores({"player_id": "cheat", "points": 5, "match_id": "m1"})
    post_scores({"player_id": "p2", "points": 3, "match_id": "m1"})
    snapshot = list(snapshots.season_composites(season))

    def ban_then_chunks():
        services_ban("cheat")
        return iter(snapshot)

    def services_ban(player_id):
        match_services.player_ban(player_id=player_id, reason="aimbot")
        player_refreshes.player_standings_refresh(player_id=player_id)

    store.rebuild_standings(season.id, ban_then_chunks, worsening=False)

    assert store.scores_of(season.id, ["cheat", "p2"])[0] is None
    assert store.board_size(season.id) == 1


def test_an_unban_puts_the_player_back_as_postgresql_has_them(post_scores, season):
    post_scores({"player_id": "p1", "points": 5, "match_id": "m1"})
    match_services.player_ban(player_id="p1", reason="aimbot")
    player_refreshes.player_standings_refresh(player_id="p1")
    assert store.scores_of(season.id, ["p1"]) == [None]

    match_services.player_unban(player_id="p1")
    player_refreshes.player_standings_refresh(player_id="p1")

    assert store.scores_of(season.id, ["p1"]) == [expected_composite(PlayerTotal.objects.get())]


def _posted_then_closed_before_mirrored(server, season, capture, points: int, match_id: str):
    """Post a result, close its season, then run the mirror the post queued."""
    with capture(execute=False) as mirror:
        server.post(
            "/api/v1/scores",
            {"player_id": "p1", "points": points, "match_id": match_id},
            format="json",
        )
    season.state = "closed"
    season.closed_at = timezone.now()
    season.save(update_fields=["state", "closed_at"])
    for callback in mirror:
        callback()


def test_standings_of_a_closed_season_are_not_written(
    server, season, django_capture_on_commit_callbacks
):
    _posted_then_closed_before_mirrored(server, season, django_capture_on_commit_callbacks, 5, "m1")

    assert not store.standings_exist(season.id)
    assert PendingStanding.objects.count() == 0


def test_a_season_closed_after_the_mirror_cached_its_settings_is_not_written(
    server, season, settings, django_capture_on_commit_callbacks
):
    # given: the mirror reuses a season's settings for a while, and has them from a first write
    settings.LEADERBOARD_SEASON_CACHE_SECONDS = 60
    services._season_settings.clear()
    server.post("/api/v1/scores", {"player_id": "p1", "points": 5, "match_id": "m1"}, format="json")
    services.totals_mirror_pending(older_than=timedelta(0))
    first = store.scores_of(season.id, ["p1"])
    assert first != [None]

    # when: a second result's season closes before that result is mirrored
    _posted_then_closed_before_mirrored(server, season, django_capture_on_commit_callbacks, 7, "m2")

    # then: whether a season is open is asked on every call, never taken from the cache
    assert store.scores_of(season.id, ["p1"]) == first
    assert PendingStanding.objects.count() == 0
    services._season_settings.clear()


def test_the_mirror_and_bans_work_after_redis_forgot_its_scripts(season):
    store.write_standings([store.StandingWrite(season.id, "a", 5 * 2**24, False)])
    store.client().script_flush()

    written = store.write_standings(
        [
            store.StandingWrite(season.id, "b", 7 * 2**24, False),
            store.StandingWrite(season.id, "c", 6 * 2**24, False),
        ]
    )
    store.client().script_flush()
    store.players_ban({season.id: 1}, "c")

    assert written == 2
    assert store.client().zrevrange(store.standings_key(season.id), 0, -1) == ["b", "a"]
