"""One board sharded by player answers every read exactly as one sorted set does.

The property: the same random results (many ties of points and of whole seconds, player ids of
mixed lengths and cases, so byte order decides ties) posted to a board with one set and to a
board with three shards give identical answers on every read endpoint and rank style (Django's
and the event loop's), pages near the top and deep ones (found by halving), and after both
seasons close, identical archives. It runs on one Redis and on a real three-node cluster.
"""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest
from django.utils import timezone
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from leaderboards import closing, fast_reads, store
from leaderboards.models import ArchivedStanding
from leaderboards.store import sharded
from matches.services import friends_replace
from seasons.models import Season
from server.asgi import application
from tests.factories import BoardFactory, SeasonFactory
from tests.leaderboards.test_fast_reads import asgi_get

# The event loop reads the seasons on threads of its own, which see committed rows only.
pytestmark = pytest.mark.django_db(transaction=True)

# Ids chosen so ties are ordered by bytes: a prefix sorts before its extensions, upper case
# before lower case, digits and '-', '.', '_' in between.
PLAYER_IDS = ["a", "ab", "abc", "B", "b", "b-1", "b.1", "b_1", "Z9", "z", "0", "00", "p01", "p1"]
PLAYER_IDS += [f"p{i:02d}" for i in range(2, 40)]

RULES = [("sum", "highest_first"), ("best", "lowest_first")]

_boards = itertools.count()

results_strategy = st.lists(
    st.tuples(
        st.sampled_from(PLAYER_IDS),
        st.sampled_from([1, 2, 3, 5, 8]),  # few values: many equal points
        st.integers(min_value=0, max_value=3),  # few seconds: many equal composites
    ),
    min_size=1,
    max_size=80,
)


def _post_to_both(post_scores, results, operator, sort_order):
    """Two seasons with the same window and rules, one set and three shards, the same results."""
    now = timezone.now().replace(microsecond=0)
    seasons = []
    for shards in (1, 3):
        board = BoardFactory(
            slug=f"shards-{next(_boards)}-{shards}",
            score_operator=operator,
            sort_order=sort_order,
            shards=shards,
        )
        seasons.append(
            SeasonFactory(
                board=board,
                slug="s",
                starts_at=now - timedelta(days=7),
                ends_at=now + timedelta(hours=1),
                grace_period=timedelta(minutes=10),
            )
        )
    for season in seasons:
        body = [
            {
                "player_id": player,
                "points": points,
                "match_id": f"m{i}",
                "board": season.board.slug,
                "ended_at": (season.starts_at + timedelta(seconds=second)).isoformat(),
            }
            for i, (player, points, second) in enumerate(results)
        ]
        response = post_scores(body)
        assert response.status_code == 200, response.json()
    assert [s.shards for s in seasons] == [1, 3]
    return seasons


def _without_board(body):
    """An answer without the board's and season's names and the moment it was read."""
    if isinstance(body, dict):
        return {
            k: _without_board(v)
            for k, v in body.items()
            if k not in ("board", "board_name", "season", "season_name", "as_of")
        }
    if isinstance(body, list):
        return [_without_board(v) for v in body]
    return body


def _reads(client, season, players, *, via_event_loop):
    """Every read endpoint's answer for the season, in both rank styles. The first player's
    friends are all the others (and one who never played); the second has none."""
    friends_replace(player_id=players[0], friend_ids=[*players[1:], "nobody"])
    slug = season.board.slug
    size = len(players)
    answers = {}
    get = (lambda path: asgi_get(application, path)) if via_event_loop else client.get
    for style in ("ordinal", "competition"):
        q = f"board={slug}&season={season.slug}&rank_style={style}"
        for offset, limit in {(0, 1), (0, 10), (0, 100), (1, 3), (size // 2, 7), (size, 5)}:
            r = get(f"/api/v1/leaderboard/top?{q}&offset={offset}&limit={limit}")
            answers[("top", style, offset, limit)] = (r.status_code, _without_board(r.json()))
        for player in [*players, "nobody"]:
            r = get(f"/api/v1/leaderboard/players/{player}?{q}")
            answers[("rank", style, player)] = (r.status_code, _without_board(r.json()))
        for player, n in zip(players, itertools.cycle([0, 1, 3]), strict=False):
            r = get(f"/api/v1/leaderboard/players/{player}/around?{q}&n={n}")
            answers[("around", style, player, n)] = (r.status_code, _without_board(r.json()))
        r = client.post(
            f"/api/v1/leaderboard/ranks?{q}", {"player_ids": [*players, "nobody"]}, format="json"
        )
        answers[("ranks", style)] = (r.status_code, _without_board(r.json()))
        for player in players[:2]:
            r = client.get(f"/api/v1/leaderboard/players/{player}/friends?{q}")
            answers[("friends", style, player)] = (r.status_code, _without_board(r.json()))
    return answers


def _archive(season):
    return list(
        ArchivedStanding.objects.filter(season=season)
        .order_by("rank")
        .values_list("rank", "competition_rank", "player_id", "points", "reached_at")
    )


@pytest.fixture(autouse=True)
def _no_rate_limits(settings):
    """Hundreds of reads a second from one address: the public limit is not under test here."""
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"public": None, "pages": None, "game_server": None},
    }


@pytest.fixture(params=["one-redis", "cluster"])
def where(request):
    if request.param == "cluster":
        request.getfixturevalue("leaderboard_on_cluster")
    return request.param


@pytest.fixture(params=["merged-top", "halving"])
def page_reach(request, monkeypatch):
    """Pages near the top merge the shards' tops; with a reach of 0 every page is found by
    halving, so the small boards here exercise the deep pages' path too."""
    if request.param == "halving":
        monkeypatch.setattr(sharded, "_MERGED_TOP_REACH", 0)
    return request.param


@pytest.mark.parametrize(("operator", "sort_order"), RULES)
@settings(
    max_examples=6,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # a shrink costs minutes of requests
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(results=results_strategy)
def test_three_shards_answer_every_read_as_one_set_does(
    client, post_scores, where, page_reach, operator, sort_order, results
):
    fast_reads.seasons_forget()
    one, three = _post_to_both(post_scores, results, operator, sort_order)
    players = sorted({player for player, _, _ in results})

    from_one = _reads(client, one, players, via_event_loop=False)
    assert _reads(client, three, players, via_event_loop=False) == from_one
    assert _reads(client, three, players, via_event_loop=True) == from_one
    # The shards really hold the players apart (more than one shard is used once a few play).
    held = [store.board_size(three.pk, shards=1)] + [
        int(store.client().zcard(store.standings_key(three.pk, 3, shard))) for shard in range(3)
    ]
    assert held[0] == 0 and sum(held[1:]) == len(players)

    # when: both seasons end and close
    for season in (one, three):
        Season.objects.filter(pk=season.pk).update(ends_at=timezone.now() - timedelta(hours=1))
        season.refresh_from_db()
        closing.season_close(season=season)

    # then: the same archive, and the same answers from the closed seasons
    assert _archive(three) == _archive(one)
    assert len(_archive(one)) == len(players)
    fast_reads.seasons_forget()
    closed = {k: v for k, v in _reads(client, one, players, via_event_loop=False).items()}
    assert _reads(client, three, players, via_event_loop=False) == closed


@pytest.mark.parametrize("seed", range(3))
def test_the_live_tickers_batch_read_is_the_same_on_three_shards(where, seed):
    """The WebSocket ticker's one read (top, followed players, around-me windows) straight from
    the gateway, on the same standings in one set and in three shards."""
    import random

    rng = random.Random(seed)
    players = rng.sample(PLAYER_IDS, 30)
    scores = {p: rng.choice([1, 2, 3]) * 2**24 + rng.randrange(3) for p in players}
    for season_id, shards in ((9001, 1), (9002, 3)):
        store.write_standings(
            store.StandingWrite(season_id, p, composite, shards=shards)
            for p, composite in scores.items()
        )
    followed = [*rng.sample(players, 10), "nobody"]
    arounds = [(p, rng.randrange(4)) for p in rng.sample(players, 5)]

    one = store.read_batch(9001, top=10, player_ids=followed, arounds=arounds)
    three = store.read_batch(9002, top=10, player_ids=followed, arounds=arounds, shards=3)

    assert three == one
    assert one.size == 30 and len(one.top) == 10 and one.players[-1] is None
