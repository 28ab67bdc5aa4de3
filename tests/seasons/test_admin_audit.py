"""The board and season edits that change what players get or where their standings live are
audited, one row per save that changes them: reward tiers (added, changed, deleted, on the
board's page) and the shards of a board or of a planned season."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from audit.models import OperatorAction
from seasons.models import Board, RewardTier
from tests.factories import BoardFactory, SeasonFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator(client):
    client.force_login(User.objects.create_superuser("operator", "op@example.com", "pw"))
    return client


def logged() -> list[tuple]:
    return list(
        OperatorAction.objects.order_by("id").values_list(
            "actor_name", "action", "board", "season", "details"
        )
    )


def board_form(board: Board, tiers: list[dict], **changes) -> dict[str, str]:
    """The board's change form as the admin posts it: these tiers (an `id` for a saved one, a
    `DELETE` to delete it), no seasons."""
    data = {
        "slug": board.slug,
        "name": board.name,
        "score_operator": board.score_operator,
        "sort_order": board.sort_order,
        "max_points_per_result": "",
        "shards": str(board.shards),
        "schedule": board.schedule,
        "schedule_cron": "",
        "schedule_timezone": "UTC",
        "season_grace_period": "01:00:00",
        "keep_closed_standings_days": "7",
        "reward_tiers-TOTAL_FORMS": str(len(tiers)),
        "reward_tiers-INITIAL_FORMS": str(sum(1 for t in tiers if t.get("id"))),
        "seasons-TOTAL_FORMS": "0",
        "seasons-INITIAL_FORMS": "0",
        **changes,
    }
    for index, tier in enumerate(tiers):
        for field, value in tier.items():
            data[f"reward_tiers-{index}-{field}"] = str(value)
        data[f"reward_tiers-{index}-board"] = str(board.pk)
    return data


def test_reward_tier_edits_on_the_boards_page_are_audited_once_per_save(operator):
    board = BoardFactory(slug="weekly")
    url = f"/admin/seasons/board/{board.pk}/change/"
    gold = {"rank_from": 1, "rank_to": 1, "reward_code": "gold"}

    added = operator.post(url, board_form(board, [gold]))
    tier = RewardTier.objects.get(board=board)
    saved = {"id": tier.pk, **gold}
    unchanged = operator.post(url, board_form(board, [saved]))
    changed = operator.post(
        url,
        board_form(
            board,
            [
                {**saved, "rank_to": 3},
                {"top_percent": "10", "reward_code": "silver"},
            ],
        ),
    )
    silver = RewardTier.objects.get(reward_code="silver")
    deleted = operator.post(
        url,
        board_form(
            board,
            [
                {**saved, "rank_to": 3},
                {"id": silver.pk, "top_percent": "10.00", "reward_code": "silver", "DELETE": "on"},
            ],
        ),
    )

    assert [p.status_code for p in (added, unchanged, changed, deleted)] == [302] * 4
    assert logged() == [
        ("operator", "reward_tiers", "weekly", "", {"from": [], "to": ["#1-1: gold"]}),
        (
            "operator",
            "reward_tiers",
            "weekly",
            "",
            {"from": ["#1-1: gold"], "to": ["#1-3: gold", "top 10.00%: silver"]},
        ),
        (
            "operator",
            "reward_tiers",
            "weekly",
            "",
            {"from": ["#1-3: gold", "top 10.00%: silver"], "to": ["#1-3: gold"]},
        ),
    ]


def test_a_refused_tier_edit_writes_no_row(operator):
    board = BoardFactory(slug="weekly")

    page = operator.post(
        f"/admin/seasons/board/{board.pk}/change/",
        board_form(board, [{"rank_from": 10, "rank_to": 5, "reward_code": "gold"}]),
    )

    assert page.status_code == 200
    assert not RewardTier.objects.exists()
    assert logged() == []


def test_a_change_of_a_boards_shards_is_audited(operator):
    board = BoardFactory(slug="huge")

    operator.post(f"/admin/seasons/board/{board.pk}/change/", board_form(board, [], shards="3"))

    assert Board.objects.get(pk=board.pk).shards == 3
    assert logged() == [("operator", "shards", "huge", "", {"shards": {"from": 1, "to": 3}})]


def test_a_change_of_a_planned_seasons_shards_is_audited(operator):
    start = timezone.now().replace(microsecond=0) + timedelta(days=3)
    season = SeasonFactory(
        board=BoardFactory(slug="huge"), slug="next", starts_at=start, ends_at=start + timedelta(7)
    )
    form = {
        "board": season.board_id,
        "slug": "next",
        "name": season.name,
        "starts_at_0": f"{start:%Y-%m-%d}",
        "starts_at_1": f"{start:%H:%M:%S}",
        "ends_at_0": f"{season.ends_at:%Y-%m-%d}",
        "ends_at_1": f"{season.ends_at:%H:%M:%S}",
        "grace_period": "01:00:00",
        "shards": "2",
    }

    page = operator.post(f"/admin/seasons/season/{season.pk}/change/", form)
    again = operator.post(f"/admin/seasons/season/{season.pk}/change/", {**form, "name": "Next"})

    assert (page.status_code, again.status_code) == (302, 302)
    assert logged() == [("operator", "shards", "huge", "next", {"shards": {"from": 1, "to": 2}})]
