"""What an operator may still change in a season, by the admin: a running season with scores
keeps its board, slug and start; a season whose standings are in Redis already keeps its shards;
a season that has not started cannot be closed now, and the refusal writes nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.utils import timezone

from audit.models import OperatorAction
from leaderboards.services import season_rebuild_standings
from seasons.models import Season, SeasonState
from tests.factories import BoardFactory, SeasonFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator(client):
    client.force_login(User.objects.create_superuser("operator", "op@example.com", "pw"))
    return client


def _split(field: str, moment) -> dict[str, str]:
    return {f"{field}_0": moment.strftime("%Y-%m-%d"), f"{field}_1": moment.strftime("%H:%M:%S")}


def season_form(season: Season, **changes) -> dict[str, str]:
    """The season's change form as the admin posts it, with these fields changed."""
    values = {
        "board": season.board_id,
        "slug": season.slug,
        "name": season.name,
        "starts_at": season.starts_at,
        "ends_at": season.ends_at,
        "grace_period": "01:00:00",
        "shards": season.shards,
        **changes,
    }
    data = {}
    for field, value in values.items():
        if field in ("starts_at", "ends_at"):
            data.update(_split(field, value))
        else:
            data[field] = str(value)
    return data


def season_row(season: Season) -> tuple:
    return Season.objects.filter(pk=season.pk).values_list(
        "board_id", "slug", "starts_at", "ends_at", "shards", "state"
    )[0]


@pytest.fixture
def scored(post_scores, season):
    assert post_scores({"player_id": "p1", "points": 50, "match_id": "m1"}).status_code == 201
    return season


@pytest.mark.parametrize("field", ["board", "slug", "starts_at"])
def test_a_running_season_with_scores_keeps_its_board_slug_and_start(operator, scored, field):
    other = BoardFactory(slug="other")
    change = {
        "board": other.pk,
        "slug": "renamed",
        "starts_at": scored.starts_at - timedelta(hours=3),
    }[field]
    before = season_row(scored)

    page = operator.post(
        f"/admin/seasons/season/{scored.pk}/change/", season_form(scored, **{field: change})
    )
    form = operator.get(f"/admin/seasons/season/{scored.pk}/change/").context["adminform"].form

    assert page.status_code == 302  # saved what may change; the rest is read-only
    assert season_row(scored) == before
    assert field not in form.fields


def test_the_model_refuses_moving_a_scored_running_season_with_a_clear_message(scored):
    season = Season.objects.get(pk=scored.pk)
    season.slug = "renamed"
    season.starts_at -= timedelta(hours=3)

    with pytest.raises(ValidationError) as refused:
        season.full_clean()

    assert refused.value.message_dict == {
        "__all__": [
            "Season 's1' has started and has scores: its board, slug and start cannot change "
            "(its results, totals and public addresses name it by them). Change its end, or "
            "close it and plan a new season."
        ]
    }


def test_the_boards_page_cannot_rename_or_move_a_scored_running_season(operator, scored):
    board = scored.board
    before = season_row(scored)
    data = {
        "slug": board.slug,
        "name": board.name,
        "score_operator": board.score_operator,
        "sort_order": board.sort_order,
        "max_points_per_result": "",
        "shards": "1",
        "schedule": board.schedule,
        "schedule_cron": "",
        "schedule_timezone": "UTC",
        "season_grace_period": "01:00:00",
        "keep_closed_standings_days": "7",
        "reward_tiers-TOTAL_FORMS": "0",
        "reward_tiers-INITIAL_FORMS": "0",
        "seasons-TOTAL_FORMS": "1",
        "seasons-INITIAL_FORMS": "1",
        "seasons-0-id": str(scored.pk),
        "seasons-0-board": str(board.pk),
        "seasons-0-slug": "renamed",
        "seasons-0-name": scored.name,
        "seasons-0-grace_period": "01:00:00",
        **{f"seasons-0-{k}": v for k, v in _split("starts_at", scored.starts_at).items()},
        **{f"seasons-0-{k}": v for k, v in _split("ends_at", scored.ends_at).items()},
    }

    page = operator.post(f"/admin/seasons/board/{board.pk}/change/", data)

    assert page.status_code == 200  # the form again, with the error
    assert "has started and has scores" in page.content.decode()
    assert season_row(scored) == before


def test_a_running_season_without_scores_may_still_be_renamed(operator, season):
    page = operator.post(
        f"/admin/seasons/season/{season.pk}/change/", season_form(season, slug="renamed")
    )

    assert page.status_code == 302
    assert Season.objects.get(pk=season.pk).slug == "renamed"


@pytest.fixture
def planned(db):
    start = timezone.now().replace(microsecond=0) + timedelta(days=3)
    return SeasonFactory(
        board=BoardFactory(slug="global"),
        slug="next",
        starts_at=start,
        ends_at=start + timedelta(days=7),
    )


def test_a_planned_season_marked_whole_keeps_its_shards(operator, planned):
    season_rebuild_standings(season=planned)  # an operator's rebuild marks it whole
    marked = Season.objects.get(pk=planned.pk)
    before = season_row(marked)

    page = operator.post(
        f"/admin/seasons/season/{planned.pk}/change/", season_form(marked, shards=2)
    )
    season = Season.objects.get(pk=planned.pk)
    season.shards = 2

    assert marked.standings_whole_since is not None
    assert page.status_code == 302
    assert season_row(marked) == before
    with pytest.raises(ValidationError) as refused:
        season.full_clean()
    assert "shards" in refused.value.message_dict


def test_a_planned_season_not_marked_may_change_its_shards(operator, planned):
    page = operator.post(
        f"/admin/seasons/season/{planned.pk}/change/", season_form(planned, shards=2)
    )

    assert page.status_code == 302
    assert Season.objects.get(pk=planned.pk).shards == 2


def test_close_now_refuses_a_season_that_has_not_started_and_writes_nothing(
    operator, planned, django_capture_on_commit_callbacks
):
    before = season_row(planned)
    seasons = Season.objects.count()

    with django_capture_on_commit_callbacks(execute=True) as queued:
        page = operator.post(
            "/admin/seasons/season/",
            {"action": "close_now", "_selected_action": [planned.pk], "post": "yes"},
            follow=True,
        )

    assert queued == []
    assert [str(m) for m in page.context["messages"]] == [
        "Season 'next' has not started (it starts at "
        f"{planned.starts_at:%Y-%m-%d %H:%M} UTC): there is nothing to close. Delete it or "
        "move its window instead.",
    ]
    assert season_row(planned) == before
    assert Season.objects.get(pk=planned.pk).state == SeasonState.OPEN
    assert Season.objects.count() == seasons
    assert not OperatorAction.objects.exists()
