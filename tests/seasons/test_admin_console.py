"""The operator's console, as an operator meets it: form errors instead of 500s, rules that do
not change under a scored season, closed seasons as history, schedules checked whole."""

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.utils import timezone

from seasons.models import Board, RewardTier, ScheduleKind, ScoreOperator, Season, SeasonState
from tests.factories import BoardFactory, SeasonFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator(client):
    client.force_login(User.objects.create_superuser("operator", "op@example.com", "pw"))
    return client


def _split(moment) -> dict[str, str]:
    return {"0": moment.strftime("%Y-%m-%d"), "1": moment.strftime("%H:%M:%S")}


def board_form(board: Board, seasons: list[dict]) -> dict[str, str]:
    """The board's change form as the admin posts it: the board, no tiers, these seasons."""
    data = {
        "slug": board.slug,
        "name": board.name,
        "score_operator": board.score_operator,
        "sort_order": board.sort_order,
        "max_points_per_result": "",
        "schedule": board.schedule,
        "schedule_cron": board.schedule_cron,
        "schedule_timezone": board.schedule_timezone,
        "season_grace_period": "01:00:00",
        "keep_closed_standings_days": "7",
        "reward_tiers-TOTAL_FORMS": "0",
        "reward_tiers-INITIAL_FORMS": "0",
        "seasons-TOTAL_FORMS": str(len(seasons)),
        "seasons-INITIAL_FORMS": str(sum(1 for s in seasons if s.get("id"))),
    }
    for index, season in enumerate(seasons):
        prefix = f"seasons-{index}-"
        data[prefix + "id"] = str(season.get("id", ""))
        data[prefix + "board"] = str(board.pk)
        data[prefix + "slug"] = season["slug"]
        data[prefix + "name"] = season["slug"]
        data[prefix + "grace_period"] = "01:00:00"
        for field in ("starts_at", "ends_at"):
            for part, value in _split(season[field]).items():
                data[f"{prefix}{field}_{part}"] = value
    return data


def test_a_season_overlapping_another_is_a_form_error_naming_it_not_a_500(operator):
    board = BoardFactory(slug="weekly", name="Weekly")
    running = SeasonFactory(board=board, slug="w1")
    overlapping = {
        "slug": "w2",
        "starts_at": running.ends_at - timedelta(days=1),
        "ends_at": running.ends_at + timedelta(days=6),
    }
    existing = {"id": running.pk, "slug": "w1", "starts_at": running.starts_at}
    existing["ends_at"] = running.ends_at

    page = operator.post(
        f"/admin/seasons/board/{board.pk}/change/", board_form(board, [existing, overlapping])
    )

    assert page.status_code == 200  # the form again, with the error
    assert "overlaps season &#x27;w1&#x27;" in page.content.decode()
    assert list(board.seasons.values_list("slug", flat=True)) == ["w1"]


def test_two_new_seasons_overlapping_each_other_are_refused_together(operator):
    board = BoardFactory(slug="weekly", name="Weekly")
    start = timezone.now().replace(microsecond=0) + timedelta(days=40)
    seasons = [
        {"slug": "a", "starts_at": start, "ends_at": start + timedelta(days=7)},
        {"slug": "b", "starts_at": start + timedelta(days=6), "ends_at": start + timedelta(days=9)},
    ]

    page = operator.post(f"/admin/seasons/board/{board.pk}/change/", board_form(board, seasons))

    assert page.status_code == 200
    assert "Seasons &#x27;a&#x27; and &#x27;b&#x27; overlap" in page.content.decode()
    assert not board.seasons.exists()


def test_scoring_rules_cannot_change_while_a_season_has_scores(post_scores, season):
    assert post_scores({"player_id": "p1", "points": 120, "match_id": "m1"}).status_code == 201
    board = Board.objects.get(pk=season.board_id)
    board.score_operator = ScoreOperator.BEST

    with pytest.raises(ValidationError) as refused:
        board.full_clean()

    assert "season 's1'" in str(refused.value)
    assert Board.objects.get(pk=board.pk).score_operator == ScoreOperator.SUM


def test_scoring_rules_may_change_before_the_season_has_a_score(season):
    board = Board.objects.get(pk=season.board_id)
    board.sort_order = "lowest_first"

    board.full_clean()  # nothing to recompute yet: allowed


def test_a_closed_season_is_read_only_and_internal_fields_are_on_no_form(operator):
    season = SeasonFactory(board=BoardFactory(slug="b"), slug="old", state=SeasonState.CLOSED)

    page = operator.get(f"/admin/seasons/season/{season.pk}/change/")
    add_page = operator.get("/admin/seasons/season/add/")
    operator.post(
        f"/admin/seasons/season/{season.pk}/change/",
        {"slug": "renamed", "name": "Renamed", "board": season.board_id},
    )

    assert page.context["adminform"].form.fields == {}
    assert "reconcile_cursor" not in add_page.content.decode()
    assert "reconcile_cursor" not in page.content.decode()
    assert Season.objects.get(pk=season.pk).slug == "old"
    assert operator.get(f"/admin/seasons/season/{season.pk}/delete/").status_code == 403


@pytest.mark.parametrize(
    ("expression", "accepted"),
    [
        ("0 18 * * FRI", True),
        ("0 * * * *", True),
        ("0 0 1 1,4,7,10 *", True),
        ("0 0 1 1,2 *", False),  # Feb 1 to Jan 1: 334 days
        ("* * * 1 *", False),  # every minute of January, then eleven months
        ("0 0 29 2 *", False),  # leap days: four years
    ],
)
def test_every_window_a_cron_schedule_makes_must_fit_a_season(expression, accepted):
    board = Board(slug="cron", name="Cron", schedule=ScheduleKind.CRON, schedule_cron=expression)

    if accepted:
        board.full_clean()
    else:
        with pytest.raises(ValidationError) as refused:
            board.full_clean()
        assert "about 194 days" in str(refused.value)


def test_leaving_the_cron_schedule_clears_its_expression():
    board = Board(
        slug="was-cron", name="Was cron", schedule=ScheduleKind.WEEKLY, schedule_cron="0 * * * *"
    )

    board.full_clean()

    assert board.schedule_cron == ""


def test_the_points_cap_is_on_the_board_form_and_in_the_api(operator, client):
    board = BoardFactory(slug="capped", name="Capped")
    Board.objects.filter(pk=board.pk).update(max_points_per_result=500)

    form = operator.get(f"/admin/seasons/board/{board.pk}/change/")
    listed = client.get("/api/v1/boards").json()

    assert "max_points_per_result" in form.context["adminform"].form.fields
    assert {b["slug"]: b["max_points_per_result"] for b in listed}["capped"] == 500


def test_a_reversed_rank_range_says_which_end_is_wrong():
    tier = RewardTier(board=BoardFactory(), reward_code="gold", rank_from=10, rank_to=5)

    with pytest.raises(ValidationError) as refused:
        tier.full_clean()

    assert "'to' (5) must be at least 'from' (10)" in str(refused.value)


def test_seasons_are_labelled_with_their_boards_name():
    season = SeasonFactory(board=BoardFactory(slug="b", name="Weekly Arena"), name="Week 49")

    assert str(season) == "Weekly Arena · Week 49"


def test_the_library_s_unused_api_key_section_is_not_in_the_admin(operator):
    index = operator.get("/admin/").content.decode()

    assert "Game-server keys" in index or "Game servers" in index
    assert "/admin/rest_framework_api_key/" not in index


def test_there_is_a_favicon(client):
    icon = client.get("/favicon.ico")

    assert icon.status_code == 200
    assert icon["Content-Type"] == "image/svg+xml"
    assert icon.content.startswith(b"<svg")


def test_a_season_within_one_day_shows_its_hours(client):
    start = datetime(2026, 11, 2, 10, 0, tzinfo=UTC)
    board = BoardFactory(slug="hourly", name="Hourly")
    SeasonFactory(board=board, slug="h1", starts_at=start, ends_at=start + timedelta(hours=1))

    page = client.get("/boards/hourly/seasons/h1/").content.decode()

    assert "Nov 2, 2026, 10:00 – 11:00" in page


def test_close_now_asks_first_and_says_what_cannot_be_undone(
    operator, post_scores, season, django_capture_on_commit_callbacks
):
    assert post_scores({"player_id": "p1", "points": 5, "match_id": "m"}).status_code == 201
    assert post_scores({"player_id": "p2", "points": 3, "match_id": "m"}).status_code == 201
    RewardTier.objects.create(board=season.board, reward_code="gold", rank_from=1, rank_to=1)
    close = {"action": "close_now", "_selected_action": [season.pk]}

    asked = operator.post("/admin/seasons/season/", close)
    still_open = Season.objects.get(pk=season.pk).state
    with django_capture_on_commit_callbacks(execute=True):
        done = operator.post("/admin/seasons/season/", {**close, "post": "yes"})

    assert asked.status_code == 200
    assert "cannot be undone" in asked.content.decode()
    assert f"{season}: 2 players archived, 1 player rewarded" in asked.content.decode()
    assert still_open == SeasonState.OPEN
    assert done.status_code == 302
    assert Season.objects.get(pk=season.pk).state == SeasonState.CLOSED


def test_a_reward_tier_that_would_pay_no_one_is_saved_with_a_warning(operator, post_scores, season):
    for player, points in (("p1", 30), ("p2", 20), ("p3", 10)):
        posted = post_scores({"player_id": player, "points": points, "match_id": "m"})
        assert posted.status_code == 201
    board = season.board
    form = {
        **board_form(board, []),
        "reward_tiers-TOTAL_FORMS": "2",
        "reward_tiers-0-reward_code": "podium",
        "reward_tiers-0-rank_from": "1",
        "reward_tiers-0-rank_to": "3",
        "reward_tiers-1-reward_code": "top-ten-percent",
        "reward_tiers-1-top_percent": "10",
    }

    saved = operator.post(f"/admin/seasons/board/{board.pk}/change/", form, follow=True)

    said = [str(m) for m in saved.context["messages"]]
    assert saved.status_code == 200
    assert RewardTier.objects.filter(board=board).count() == 2
    assert (
        "Reward tier 'top-ten-percent' would pay no one if "
        f"{season.name} closed now (3 players): its ranks go to a tier before it."
    ) in said
