"""The rewards preview: the close's reward rule on the live standings, written nowhere, and it
agrees with what the close then gives."""

from decimal import Decimal

import pytest
from django.contrib.auth.models import User

from leaderboards import closing
from leaderboards.models import SeasonReward
from leaderboards.rewards import season_rewards_preview
from seasons.models import RewardTier

pytestmark = pytest.mark.django_db


@pytest.fixture
def twenty_nine(post_scores, season):
    """29 players on the global board: p01 has 129 points, p02 128, ... p29 101."""
    body = [{"player_id": f"p{i:02d}", "points": 130 - i, "match_id": "m"} for i in range(1, 30)]
    assert post_scores(body).status_code == 200
    return season


def spans(preview):
    return {o.tier.reward_code: (o.covers, o.gets, o.players) for o in preview.tiers}


def test_top_percent_rounds_up_and_overlapping_tiers_follow_the_close_rule(twenty_nine):
    board = twenty_nine.board
    RewardTier.objects.create(board=board, rank_from=1, rank_to=1, reward_code="gold")
    RewardTier.objects.create(board=board, top_percent=Decimal("10"), reward_code="silver")
    RewardTier.objects.create(board=board, top_percent=Decimal("50"), reward_code="bronze")
    RewardTier.objects.create(board=board, rank_from=40, rank_to=50, reward_code="far")

    preview = season_rewards_preview(season=twenty_nine, offset=0, limit=5)

    assert preview.players == 29
    assert spans(preview) == {
        # 10% of 29 = 2.9, rounded up: ranks 1-3; rank 1 goes to the rank range.
        "gold": ((1, 1), [(1, 1)], 1),
        "silver": ((1, 3), [(2, 3)], 2),
        "bronze": ((1, 15), [(4, 15)], 12),
        "far": (None, [], 0),
    }
    assert [(r.rank, r.player_id, r.points, r.reward_code) for r in preview.rows] == [
        (1, "p01", 129, "gold"),
        (2, "p02", 128, "silver"),
        (3, "p03", 127, "silver"),
        (4, "p04", 126, "bronze"),
        (5, "p05", 125, "bronze"),
    ]
    assert (preview.offset, preview.next_offset) == (0, 5)
    assert SeasonReward.objects.count() == 0


def test_the_last_page_has_players_without_a_reward_and_no_next_page(twenty_nine):
    RewardTier.objects.create(board=twenty_nine.board, top_percent=Decimal("50"), reward_code="b")

    preview = season_rewards_preview(season=twenty_nine, offset=13, limit=100)

    assert [(r.rank, r.reward_code) for r in preview.rows][:4] == [
        (14, "b"),
        (15, "b"),
        (16, None),
        (17, None),
    ]
    assert len(preview.rows) == 16
    assert preview.next_offset is None


def test_the_preview_is_what_the_close_then_gives(twenty_nine):
    board = twenty_nine.board
    RewardTier.objects.create(board=board, rank_from=1, rank_to=1, reward_code="gold")
    RewardTier.objects.create(board=board, rank_from=2, rank_to=10, reward_code="silver")
    RewardTier.objects.create(board=board, top_percent=Decimal("33.33"), reward_code="bronze")
    preview = season_rewards_preview(season=twenty_nine, offset=0, limit=100)

    closing.season_close(season=twenty_nine, force=True)

    given = dict(SeasonReward.objects.values_list("player_id", "reward_code"))
    assert given == {r.player_id: r.reward_code for r in preview.rows if r.reward_code}
    assert len(given) == 10  # 33.33% of 29 = 9.67, up to 10: ranks 1-10, all taken by ranges
    assert spans(preview)["bronze"] == ((1, 10), [], 0)


def test_a_board_without_tiers_and_an_empty_season_preview_nothing(season):
    preview = season_rewards_preview(season=season, offset=0, limit=100)

    assert (preview.players, preview.tiers, preview.rows, preview.next_offset) == (0, [], [], None)


def test_the_admin_page_shows_the_preview_and_the_rounding_rule(client, twenty_nine):
    RewardTier.objects.create(
        board=twenty_nine.board, top_percent=Decimal("10"), reward_code="silver"
    )
    client.force_login(User.objects.create_superuser("operator", "op@example.com", "pw"))

    change = client.get(f"/admin/seasons/season/{twenty_nine.pk}/change/").content.decode()
    page = client.get(f"/admin/seasons/season/{twenty_nine.pk}/rewards-preview/")
    via_action = client.post(
        "/admin/seasons/season/",
        {"action": "preview_rewards", "_selected_action": [str(twenty_nine.pk)]},
    )

    assert f"/admin/seasons/season/{twenty_nine.pk}/rewards-preview/" in change
    text = page.content.decode()
    assert page.status_code == 200
    assert "29 ranked players" in text
    assert "ceil(N / 100 × players), rounded <strong>up</strong>" in text
    assert "<td>ranks 1-3</td>" in text
    assert via_action.status_code == 302
    assert via_action["Location"] == f"/admin/seasons/season/{twenty_nine.pk}/rewards-preview/"
    assert SeasonReward.objects.count() == 0
