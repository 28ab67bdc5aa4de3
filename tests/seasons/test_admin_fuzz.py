"""The admin's add and change forms of boards (with reward tiers and seasons inline) and seasons,
fed invalid combinations: every answer is the form again with its errors, or a save; never a 500
(the test client raises whatever a view raised)."""

from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import User
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seasons.models import Board, RewardTier, Season
from tests.factories import BoardFactory, SeasonFactory

pytestmark = pytest.mark.django_db

FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# Values an operator might type, right or wrong, per kind of field.
numbers = st.one_of(
    st.just(""),
    st.integers(min_value=-5, max_value=2**31 + 5).map(str),
    st.sampled_from(["abc", "1.5", "1e3", " 7 ", "0", "-0", "99999999999999999999"]),
)
percents = st.one_of(
    st.just(""),
    st.decimals(min_value=-10, max_value=200, places=2, allow_nan=False).map(str),
    st.sampled_from(["NaN", "Infinity", "12.345", "100.00", "0.01", "x"]),
)
texts = st.one_of(
    st.text(max_size=80),
    st.sampled_from(["", "ok-slug", "UPPER", "a" * 65, "sp ace", "ünï", "-lead", "x\x00y"]),
)
moments = st.one_of(
    st.datetimes(
        min_value=datetime(1990, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)
    ).map(lambda d: (d.strftime("%Y-%m-%d"), d.strftime("%H:%M:%S"))),
    st.tuples(st.sampled_from(["", "2026-02-30", "tomorrow"]), st.sampled_from(["", "25:00"])),
)
durations = st.sampled_from(["", "01:00:00", "-01:00:00", "0", "9999 days", "abc", "00:00:00"])
choices = {
    "score_operator": st.sampled_from(["sum", "best", "", "avg"]),
    "sort_order": st.sampled_from(["highest_first", "lowest_first", "", "random"]),
    "schedule": st.sampled_from(["none", "weekly", "monthly", "quarterly", "cron", "", "daily"]),
    "schedule_cron": st.sampled_from(
        ["", "0 18 * * FRI", "0 0 1 1,2 *", "* * * * *", "61 * * * *", "nonsense", "0 0 30 2 *"]
    ),
    "schedule_timezone": st.sampled_from(["UTC", "Europe/Paris", "Mars/Olympus", "", "utc"]),
}


@pytest.fixture
def operator(client):
    client.force_login(User.objects.create_superuser("operator", "op@example.com", "pw"))
    return client


def _tiers(rows):
    data = {
        "reward_tiers-TOTAL_FORMS": str(len(rows)),
        "reward_tiers-INITIAL_FORMS": "0",
    }
    for index, (rank_from, rank_to, percent, code) in enumerate(rows):
        prefix = f"reward_tiers-{index}-"
        data.update(
            {
                prefix + "rank_from": rank_from,
                prefix + "rank_to": rank_to,
                prefix + "top_percent": percent,
                prefix + "reward_code": code,
            }
        )
    return data


def _seasons(rows, board_pk=""):
    data = {"seasons-TOTAL_FORMS": str(len(rows)), "seasons-INITIAL_FORMS": "0"}
    for index, (slug, start, end, grace) in enumerate(rows):
        prefix = f"seasons-{index}-"
        data.update(
            {
                prefix + "slug": slug,
                prefix + "name": slug or "x",
                prefix + "board": str(board_pk),
                prefix + "starts_at_0": start[0],
                prefix + "starts_at_1": start[1],
                prefix + "ends_at_0": end[0],
                prefix + "ends_at_1": end[1],
                prefix + "grace_period": grace,
            }
        )
    return data


board_forms = st.fixed_dictionaries(
    {
        "slug": texts,
        "name": texts,
        "max_points_per_result": numbers,
        "season_grace_period": durations,
        "keep_closed_standings_days": numbers,
        **choices,
    }
)
tier_rows = st.lists(st.tuples(numbers, numbers, percents, texts), max_size=3)
season_rows = st.lists(st.tuples(texts, moments, moments, durations), max_size=3)


@FUZZ
@given(board=board_forms, tiers=tier_rows, seasons=season_rows)
def test_the_board_add_form_never_answers_500(operator, board, tiers, seasons):
    response = operator.post(
        "/admin/seasons/board/add/", {**board, **_tiers(tiers), **_seasons(seasons)}
    )

    assert response.status_code in (200, 302)
    if response.status_code == 200:
        assert "errornote" in response.content.decode() or "errorlist" in response.content.decode()


@FUZZ
@given(board=board_forms, tiers=tier_rows, seasons=season_rows)
def test_the_board_change_form_of_a_scored_board_never_answers_500(
    operator, post_scores, board, tiers, seasons
):
    existing = BoardFactory(slug="global", name="Global")
    if not Season.objects.filter(board=existing).exists():
        SeasonFactory(board=existing, slug="s1")
        post_scores({"player_id": "p1", "points": 10, "match_id": "m1"})
    form = {**board, **_tiers(tiers), **_seasons(seasons, existing.pk)}

    response = operator.post(f"/admin/seasons/board/{existing.pk}/change/", form)

    assert response.status_code in (200, 302)


@FUZZ
@given(
    slug=texts,
    name=texts,
    start=moments,
    end=moments,
    grace=durations,
    board_choice=st.sampled_from(["own", "", "999999", "x"]),
)
def test_the_season_add_form_never_answers_500(
    operator, slug, name, start, end, grace, board_choice
):
    board = BoardFactory(slug="weekly", name="Weekly")
    if not Season.objects.filter(board=board).exists():
        SeasonFactory(board=board, slug="w1")
    form = {
        "board": str(board.pk) if board_choice == "own" else board_choice,
        "slug": slug,
        "name": name,
        "starts_at_0": start[0],
        "starts_at_1": start[1],
        "ends_at_0": end[0],
        "ends_at_1": end[1],
        "grace_period": grace,
    }

    response = operator.post("/admin/seasons/season/add/", form)

    assert response.status_code in (200, 302)


TIERS_BOARD = {
    "slug": "tiers",
    "name": "Tiers",
    "score_operator": "sum",
    "sort_order": "highest_first",
    "schedule": "none",
    "schedule_cron": "",
    "schedule_timezone": "UTC",
    "max_points_per_result": "",
    "season_grace_period": "01:00:00",
    "keep_closed_standings_days": "7",
}


def test_a_tier_from_rank_10_to_5_is_a_form_error_in_words_and_nothing_is_saved(operator):
    response = operator.post(
        "/admin/seasons/board/add/",
        {**TIERS_BOARD, **_tiers([("10", "5", "", "gold")]), **_seasons([])},
    )

    assert response.status_code == 200
    text = response.content.decode().replace("&#x27;", "'")
    assert "The range ends before it starts: 'to' (5) must be at least 'from' (10)." in text
    assert (Board.objects.count(), RewardTier.objects.count()) == (0, 0)


def test_a_negative_grace_for_the_boards_seasons_is_a_form_error_and_nothing_is_saved(operator):
    # (found by the fuzz: the board was saved, then planning its first season answered 500)
    board = {**TIERS_BOARD, "schedule": "weekly", "season_grace_period": "-1 00:00:00"}

    response = operator.post("/admin/seasons/board/add/", {**board, **_tiers([]), **_seasons([])})

    assert response.status_code == 200
    assert "The grace period cannot be negative." in response.content.decode()
    assert (Board.objects.count(), Season.objects.count()) == (0, 0)
