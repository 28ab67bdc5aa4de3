"""A sharded board's segments: each shard keeps its own segment sets in its slot (on a Redis
Cluster, on its own node), and every read within a segment merges them into exactly the answer
one set would give."""

from datetime import timedelta

import pytest

from leaderboards import services, store
from matches.models import PlayerTotal
from tests.factories import BoardFactory, SeasonFactory
from tests.mirroring import expected_composite

pytestmark = pytest.mark.django_db

SHARDS = 3
COUNTRIES = ["DE", "FR", "JP"]


@pytest.fixture(params=["one-redis", "cluster"])
def wide(request, server, django_capture_on_commit_callbacks):
    """40 players in three countries on a board of three shards; points repeat, so the order
    of equal points is the time they were reached."""
    if request.param == "cluster":
        request.getfixturevalue("leaderboard_on_cluster")
    board = BoardFactory(slug="wide", shards=SHARDS, segment_dimensions=["country"])
    season = SeasonFactory(board=board, slug="w1", shards=SHARDS)
    for i in range(40):
        player = f"w{i:02d}"
        with django_capture_on_commit_callbacks(execute=True):
            profile = {"segments": {"country": COUNTRIES[i % 3]}}
            assert (
                server.put(f"/api/v1/players/{player}", profile, format="json").status_code == 201
            )
            posted = server.post(
                "/api/v1/scores",
                {
                    "board": "wide",
                    "player_id": player,
                    "points": (i * 7) % 11 + 1,
                    "match_id": f"m-{player}",
                    "ended_at": (season.starts_at + timedelta(seconds=i + 1)).isoformat(),
                },
                format="json",
            )
        assert posted.status_code == 201
    return season


def _expected(season, country):
    """The segment's players best first, as PostgreSQL ranks them."""
    members = [f"w{i:02d}" for i in range(40) if COUNTRIES[i % 3] == country]
    totals = PlayerTotal.objects.filter(season=season, player_id__in=members)
    ranked = sorted(totals.select_related("season__board"), key=expected_composite, reverse=True)
    return [total.player_id for total in ranked]


def _read(client, path, **query):
    params = "&".join(f"{k}={v}" for k, v in {"board": "wide", **query}.items())
    response = client.get(f"/api/v1/leaderboard/{path}?{params}")
    assert response.status_code == 200, response.content
    return response.json()


def test_every_segment_read_of_a_sharded_board_is_exact(client, wide):
    assert len({store.shard_of(f"w{i:02d}", SHARDS) for i in range(40)}) == SHARDS
    for country in COUNTRIES:
        expected = _expected(wide, country)
        segment = f"country:{country}"

        top = _read(client, "top", segment=segment, limit=100)
        assert [e["player_id"] for e in top["entries"]] == expected
        assert top["total_players"] == len(expected)
        page = _read(client, "top", segment=segment, offset=5, limit=3)
        assert [(e["rank"], e["player_id"]) for e in page["entries"]] == [
            (6, expected[5]),
            (7, expected[6]),
            (8, expected[7]),
        ]
        for rank, player in enumerate(expected, start=1):
            assert _read(client, f"players/{player}", segment=segment)["rank"] == rank
        around = _read(client, f"players/{expected[4]}/around", segment=segment, n=2)
        assert [e["player_id"] for e in around["entries"]] == expected[2:7]


def test_a_sharded_boards_rebuild_gives_the_same_segment_reads(client, wide):
    before = {c: _read(client, "top", segment=f"country:{c}", limit=100) for c in COUNTRIES}

    services.season_rebuild_standings(season=wide)

    for country in COUNTRIES:
        after = _read(client, "top", segment=f"country:{country}", limit=100)
        assert after["entries"] == before[country]["entries"]
        assert [e["player_id"] for e in after["entries"]] == _expected(wide, country)
