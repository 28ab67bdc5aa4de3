"""An operator's rebuild or close runs once: a double click queues one job, and a message the
broker delivers twice (held past its visibility timeout) does nothing the second time."""

import pytest

from audit.models import OperatorAction, OperatorActionKind
from leaderboards import store, tasks
from seasons.jobs import season_rebuild_queue
from seasons.models import Season, SeasonState
from seasons.operator_actions import season_close_now

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator(django_user_model):
    return django_user_model.objects.create_user("ops", password="x", is_staff=True)


@pytest.fixture
def played(season, post_scores):
    for player, points in (("p1", 30), ("p2", 20)):
        assert post_scores({"player_id": player, "points": points, "match_id": "m"}).status_code
    return season


def audited(action):
    return list(
        OperatorAction.objects.filter(action=action).values_list("actor_name", "season", "details")
    )


def test_a_double_click_on_rebuild_queues_one_rebuild(
    played, operator, django_capture_on_commit_callbacks
):
    # when: the operator asks twice before the worker takes the job
    with django_capture_on_commit_callbacks(execute=True):
        queued = [season_rebuild_queue(played.pk, actor_id=operator.pk) for _ in range(2)]

    # then: one job, one rebuild, one audit row
    assert queued == [True, False]
    assert audited(OperatorActionKind.REBUILD) == [("ops", "s1", {"players": 2})]

    # and: once it ran, a new request is a new job
    with django_capture_on_commit_callbacks(execute=True):
        assert season_rebuild_queue(played.pk, actor_id=operator.pk) is True
    assert len(audited(OperatorActionKind.REBUILD)) == 2


def test_a_rebuild_delivered_twice_runs_once(played, operator):
    message = {"actor_id": operator.pk, "job_id": "0f3c"}
    store.delete_standings(played.pk)

    first = tasks.rebuild_season.apply((played.pk,), message).get()
    store.delete_standings(played.pk)
    again = tasks.rebuild_season.apply((played.pk,), message).get()

    assert (first, again) == (2, 0)
    assert store.board_size(played.pk) == 0  # the second delivery rebuilt nothing
    assert audited(OperatorActionKind.REBUILD) == [("ops", "s1", {"players": 2})]


def test_a_double_click_on_close_now_closes_once_with_one_audit_row(
    played, operator, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        asked = [season_close_now(season=played, actor=operator) for _ in range(2)]

    assert asked == [True, False]
    assert Season.objects.get(pk=played.pk).state == SeasonState.CLOSED
    assert len(audited(OperatorActionKind.CLOSE_NOW)) == 1
