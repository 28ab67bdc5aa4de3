"""A correction (a voided result) wins over every older copy of the player's standing: a
rebuild's snapshot read before it, and a standing committed before it but mirrored after."""

from datetime import timedelta

import pytest

from leaderboards import services, snapshots, store
from matches.corrections import result_void
from matches.models import MatchResult, PendingStanding, PlayerTotal
from tests.mirroring import expected_composite

pytestmark = pytest.mark.django_db


def void(match_id, player_id, django_capture_on_commit_callbacks) -> None:
    result = MatchResult.objects.get(match_id=match_id, player_id=player_id)
    with django_capture_on_commit_callbacks(execute=True):
        assert result_void(result_id=result.pk, reason="aimbot", actor=None) is True


def test_a_void_committed_while_a_rebuild_copies_its_snapshot_is_not_undone_by_a_later_chunk(
    post_scores, season, monkeypatch, django_capture_on_commit_callbacks
):
    # given: "cheat" (80 + 10) below "top", so the rebuild copies cheat's snapshot in its second
    # chunk of one row; the void commits (and is corrected in Redis) after the first chunk
    post_scores({"player_id": "top", "points": 100, "match_id": "m-top"})
    post_scores({"player_id": "cheat", "points": 80, "match_id": "m1"})
    post_scores({"player_id": "cheat", "points": 10, "match_id": "m2"})
    monkeypatch.setattr(snapshots, "REBUILD_CHUNK", 1)
    chunks = []

    def void_after_the_first_chunk(rows: int) -> None:
        chunks.append(rows)
        if len(chunks) == 1:
            void("m1", "cheat", django_capture_on_commit_callbacks)

    # when
    size = services.season_rebuild_standings(season=season, on_progress=void_after_the_first_chunk)

    # then: the swapped-in board has the corrected total, not the snapshot's 90
    top, cheat = (
        PlayerTotal.objects.get(player_id="top"),
        PlayerTotal.objects.get(player_id="cheat"),
    )
    assert (chunks, size, cheat.points) == ([1, 1], 2, 10)
    assert store.scores_of(season.pk, ["top", "cheat"]) == [
        expected_composite(top),
        expected_composite(cheat),
    ]


def test_a_standing_committed_before_a_void_and_swept_after_it_does_not_reinflate_the_score(
    server, post_scores, season, django_capture_on_commit_callbacks
):
    # given: a result mirrored, then a bigger one whose mirror task was lost (its outbox row
    # carries the pre-void composite), then the bigger one voided and corrected in Redis
    post_scores({"player_id": "cheat", "points": 10, "match_id": "m1"})
    with django_capture_on_commit_callbacks(execute=False):
        server.post(
            "/api/v1/scores", {"player_id": "cheat", "points": 80, "match_id": "m2"}, format="json"
        )
    assert PendingStanding.objects.count() == 1
    void("m2", "cheat", django_capture_on_commit_callbacks)
    corrected = PlayerTotal.objects.get(player_id="cheat")
    assert store.scores_of(season.pk, ["cheat"]) == [expected_composite(corrected)]

    # when: the sweep mirrors the pre-void standing
    assert services.totals_mirror_pending(older_than=timedelta(0)) == 1

    # then: still the corrected total, and the outbox row is done with
    assert corrected.points == 10
    assert store.scores_of(season.pk, ["cheat"]) == [expected_composite(corrected)]
    assert PendingStanding.objects.count() == 0


def test_a_redelivered_pre_void_mirror_task_does_not_reinflate_the_score(
    server, post_scores, season, django_capture_on_commit_callbacks
):
    # given: the mirror task of a result, held back (a redelivery, a slow worker) past its void
    post_scores({"player_id": "cheat", "points": 10, "match_id": "m1"})
    with django_capture_on_commit_callbacks(execute=False) as late_mirror:
        server.post(
            "/api/v1/scores", {"player_id": "cheat", "points": 80, "match_id": "m2"}, format="json"
        )
    void("m2", "cheat", django_capture_on_commit_callbacks)

    # when
    for callback in late_mirror:
        callback()

    # then
    corrected = PlayerTotal.objects.get(player_id="cheat")
    assert store.scores_of(season.pk, ["cheat"]) == [expected_composite(corrected)]


def test_results_after_a_void_still_raise_the_score_whatever_arrives_late(
    server, post_scores, season, django_capture_on_commit_callbacks
):
    # given: a pre-void standing still in the outbox, a void, then a new result mirrored
    post_scores({"player_id": "cheat", "points": 10, "match_id": "m1"})
    with django_capture_on_commit_callbacks(execute=False):
        server.post(
            "/api/v1/scores", {"player_id": "cheat", "points": 80, "match_id": "m2"}, format="json"
        )
    void("m2", "cheat", django_capture_on_commit_callbacks)
    post_scores({"player_id": "cheat", "points": 5, "match_id": "m3"})

    # when
    services.totals_mirror_pending(older_than=timedelta(0))

    # then: the new result counts, the pre-void standing does not
    total = PlayerTotal.objects.get(player_id="cheat")
    assert total.points == 15
    assert store.scores_of(season.pk, ["cheat"]) == [expected_composite(total)]
    assert PendingStanding.objects.count() == 0


def test_a_late_older_correction_does_not_undo_a_newer_one(season):
    store.write_standings([store.StandingWrite(season.pk, "p1", 90, stamp=1)])
    assert store.standing_correct(season.pk, "p1", 50, stamp=20) is True

    assert store.standing_correct(season.pk, "p1", 70, stamp=10) is False

    assert store.scores_of(season.pk, ["p1"]) == [50]
