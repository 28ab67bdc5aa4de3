"""A closed season's rewards as clients read them (`/api/v1/seasons/{slug}/rewards`)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from leaderboards.models import SeasonReward
from seasons.models import Season, SeasonState
from tests.factories import BoardFactory, PlayerFactory, SeasonFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def rewarded(db):
    """A closed global season whose five best players (p1..p5, ranks 1-5) got a reward."""
    ends_at = timezone.now().replace(microsecond=0) - timedelta(days=1)
    season = SeasonFactory(
        board=BoardFactory(slug="global"),
        slug="past",
        starts_at=ends_at - timedelta(days=7),
        ends_at=ends_at,
        state=SeasonState.CLOSED,
        closed_at=ends_at,
    )
    SeasonReward.objects.bulk_create(
        SeasonReward(
            season=season,
            player=PlayerFactory(player_id=f"p{rank}"),
            rank=rank,
            reward_code="gold" if rank == 1 else "top-5",
            awarded_at=ends_at,
        )
        for rank in range(1, 6)
    )
    return season


def reward(rank: int, season: Season) -> dict:
    return {
        "player_id": f"p{rank}",
        "rank": rank,
        "reward_code": "gold" if rank == 1 else "top-5",
        "awarded_at": season.ends_at.isoformat().replace("+00:00", "Z"),
    }


def test_a_seasons_rewards_come_in_pages_by_rank(client, rewarded):
    first = client.get("/api/v1/seasons/past/rewards?limit=2")
    middle = client.get("/api/v1/seasons/past/rewards?limit=2&offset=2")
    last = client.get("/api/v1/seasons/past/rewards?limit=2&offset=4")
    past_the_end = client.get("/api/v1/seasons/past/rewards?offset=5")

    assert first.status_code == 200
    assert first.json() == {
        "board": "global",
        "season": "past",
        "rewards": [reward(1, rewarded), reward(2, rewarded)],
        "next_offset": 2,
    }
    assert middle.json()["rewards"] == [reward(3, rewarded), reward(4, rewarded)]
    assert middle.json()["next_offset"] == 4
    assert last.json()["rewards"] == [reward(5, rewarded)]
    assert last.json()["next_offset"] is None
    assert past_the_end.json()["rewards"] == []
    assert past_the_end.json()["next_offset"] is None


def test_rewards_pages_hold_100_by_default_and_1000_at_most(client, rewarded):
    default = client.get("/api/v1/seasons/past/rewards").json()
    largest = client.get("/api/v1/seasons/past/rewards?limit=1000").json()
    one_player = client.get("/api/v1/seasons/past/rewards?player_id=p3").json()

    assert [r["rank"] for r in default["rewards"]] == [1, 2, 3, 4, 5]
    assert default["next_offset"] is None
    assert largest == default
    assert one_player["rewards"] == [reward(3, rewarded)]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("limit=0", "limit"),
        ("limit=1001", "limit"),
        ("limit=ten", "limit"),
        ("offset=-1", "offset"),
        ("offset=2147483649", "offset"),
    ],
)
def test_a_bad_rewards_page_is_400(client, rewarded, query, field):
    response = client.get(f"/api/v1/seasons/past/rewards?{query}")

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert list(error["details"]) == [field]


def test_an_empty_player_id_or_board_means_not_given(client, rewarded):
    response = client.get("/api/v1/seasons/past/rewards?player_id=&board=&limit=2")

    assert response.status_code == 200
    assert response.json()["rewards"] == [reward(1, rewarded), reward(2, rewarded)]
