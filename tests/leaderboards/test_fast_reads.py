"""The hot reads answered on the event loop (leaderboards/fast_reads.py) keep the API's contract:
the same bytes, statuses, headers, error bodies and rate-limit counts as Django's views, and
everything they do not answer reaches Django unchanged."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
import time_machine
from prometheus_client import REGISTRY

from config.building_blocks.minute_counts import MinuteCounts, minutes_read, process_counts
from leaderboards import fast_reads, store
from leaderboards.fast_reads import FastReads
from matches.models import Player
from seasons.models import Season, SeasonState
from server.asgi import application
from tests.asgi import asgi_get

# The reads run the season lookup on a thread of their own, which must see committed rows.
pytestmark = pytest.mark.django_db(transaction=True)

# Headers that differ between two answers for reasons of the moment, not of the contract.
_VOLATILE = {"date", "server", "content-length", "cache-control", "last-modified"}


@pytest.fixture
def board(board):
    """The shared board (tests/leaderboards/conftest.py), and p1 with a profile."""
    Player.objects.filter(player_id="p1").update(display_name="Ada", avatar_url="https://x/a.png")
    return board


class DjangoCalls:
    """Stands in for Django behind the route: counts what reaches it."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self.paths.append(scope["path"])
        await send({"type": "http.response.start", "status": 599, "headers": []})
        await send({"type": "http.response.body", "body": b""})


def _headers(response: Any) -> dict[str, str]:
    return {k.lower(): v for k, v in response.headers.items() if k.lower() not in _VOLATILE}


SAME_AS_DJANGO = [
    "/api/v1/leaderboard/players/p2",
    "/api/v1/leaderboard/players/p2?rank_style=competition",
    "/api/v1/leaderboard/players/p4?board=global&season=s1",
    "/api/v1/leaderboard/players/nobody",
    "/api/v1/leaderboard/players/p3/around?n=1",
    "/api/v1/leaderboard/players/p2/around?n=2&rank_style=competition",
    "/api/v1/leaderboard/players/nobody/around",
    "/api/v1/leaderboard/top?limit=3",
    "/api/v1/leaderboard/top?limit=2&offset=2&rank_style=competition",
    # Handed to Django: its validation, its unknown board.
    "/api/v1/leaderboard/top?limit=500",
    "/api/v1/leaderboard/players/p1?rank_style=dense",
    "/api/v1/leaderboard/players/p1?board=nope",
    "/api/v1/leaderboard/players/bad%20id",
    # An empty number or rank_style is no value the schema admits: Django's 400.
    "/api/v1/leaderboard/top?offset=",
    "/api/v1/leaderboard/players/p2?rank_style=",
    "/api/v1/leaderboard/players/p3/around?n=",
]


@pytest.mark.parametrize("path", SAME_AS_DJANGO)
def test_the_event_loop_answers_exactly_what_django_answers(client, board, settings, path):
    # Top answers are shared for a minute, so both servers serve the same body and validator.
    settings.LEADERBOARD_TOP_CACHE_SECONDS = 60

    from_django = client.get(path)
    from_loop = asgi_get(application, path)

    assert from_loop.status_code == from_django.status_code
    assert from_loop.content == from_django.content
    assert _headers(from_loop) == _headers(from_django)


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/leaderboard/players/p2",
        "/api/v1/leaderboard/players/nobody",
        "/api/v1/leaderboard/players/p2/around?n=1",
        "/api/v1/leaderboard/top?limit=3",
    ],
)
def test_hot_reads_of_a_live_season_never_reach_django(board, path):
    django = DjangoCalls()

    response = asgi_get(FastReads(django), path)

    assert response.status_code in (200, 404)
    assert response.json()
    assert django.paths == []


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/leaderboard/top?limit=0",
        "/api/v1/leaderboard/players/p1?board=nope",
        "/api/v1/leaderboard/players/p1/seasons",
        "/api/v1/ping",
    ],
)
def test_what_the_route_does_not_answer_goes_to_django_unchanged(board, path):
    django = DjangoCalls()

    response = asgi_get(FastReads(django), path)

    assert response.status_code == 599
    assert django.paths == [path.split("?")[0]]


def test_a_closed_season_is_read_by_django_from_its_archive(board):
    Season.objects.filter(pk=board.pk).update(state=SeasonState.CLOSED)
    django = DjangoCalls()

    asgi_get(FastReads(django), "/api/v1/leaderboard/players/p1?season=s1")

    assert django.paths == ["/api/v1/leaderboard/players/p1"]


def test_top_answers_carry_validators_and_a_matching_one_gets_304(board, settings):
    settings.LEADERBOARD_TOP_CACHE_SECONDS = 1
    first = asgi_get(application, "/api/v1/leaderboard/top")

    again = asgi_get(
        application, "/api/v1/leaderboard/top", {"If-None-Match": first.headers["ETag"]}
    )
    other = asgi_get(application, "/api/v1/leaderboard/top", {"If-None-Match": '"stale"'})

    assert first.headers["Cache-Control"] == "public, max-age=1"
    assert first.headers["Last-Modified"].endswith(" GMT")
    assert (again.status_code, again.content) == (304, b"")
    assert again.headers["ETag"] == first.headers["ETag"]
    assert other.status_code == 200
    assert other.content == first.content


def test_the_public_rate_limit_counts_both_servers_as_one(client, board, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"public": "3/h", "pages": None, "game_server": None},
    }
    path = "/api/v1/leaderboard/players/p1"

    codes = [client.get(path, REMOTE_ADDR="127.0.0.1").status_code]
    codes += [asgi_get(application, path).status_code for _ in range(2)]
    refused_here = asgi_get(application, path)
    refused_by_django = client.get(path, REMOTE_ADDR="127.0.0.1")

    assert codes == [200, 200, 200]
    assert refused_here.status_code == 429
    assert refused_here.content == refused_by_django.content
    assert refused_here.json()["error"]["code"] == "rate_limited"
    assert int(refused_here.headers["Retry-After"]) >= 1


def _metric(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_answers_are_counted_in_djangos_request_metrics(board):
    labels = {"status": "200", "view": "leaderboard-player", "method": "GET"}
    before = _metric("django_http_responses_total_by_status_view_method_total", **labels)
    latency_before = _metric(
        "django_http_requests_latency_seconds_by_view_method_count",
        view="leaderboard-player",
        method="GET",
    )

    asgi_get(application, "/api/v1/leaderboard/players/p1")

    assert _metric("django_http_responses_total_by_status_view_method_total", **labels) == (
        before + 1
    )
    latency_after = _metric(
        "django_http_requests_latency_seconds_by_view_method_count",
        view="leaderboard-player",
        method="GET",
    )
    assert latency_after == latency_before + 1


def test_answers_are_counted_once_in_the_dashboards_minute_counts(board):
    minute = datetime(2031, 1, 2, 3, 5, tzinfo=UTC)  # no other test counts in it
    with time_machine.travel(minute.replace(second=20), tick=False):
        answers = [
            asgi_get(application, path).status_code
            for path in (
                "/api/v1/leaderboard/players/nobody",  # the event loop's own 404
                "/api/v1/leaderboard/players/p1?board=nope",  # handed to Django: its 404
                "/api/v1/leaderboard/top?limit=3",
            )
        ]
        process_counts().flush()

    assert answers == [404, 404, 200]
    assert minutes_read([minute]) == [
        MinuteCounts(minute=minute, responses_4xx=2, responses_5xx=0, sockets=0)
    ]


def test_reads_of_the_same_moment_share_a_round_trip_and_each_gets_its_own_answer(board):
    async def read_all() -> list[Any]:
        return await asyncio.gather(
            *(store.aread_rank(board.pk, f"p{i}") for i in (1, 2, 3, 4, 5) * 20)
        )

    answers = asyncio.run(read_all())

    expected = {f"p{i}": store.read_rank(board.pk, f"p{i}") for i in (1, 2, 3, 4, 5)}
    assert answers == [expected[f"p{i}"] for i in (1, 2, 3, 4, 5) * 20]
    assert [s.rank for _, s in answers[:4]] == [1, 3, 2, 4]
    assert answers[4] == (4, None)


def test_reads_recover_when_redis_has_forgotten_its_scripts(board):
    async def rank_after_a_flush() -> Any:
        first = await store.aread_rank(board.pk, "p1")
        store.client().script_flush()
        return first, await store.aread_rank(board.pk, "p1")

    first, after = asyncio.run(rank_after_a_flush())

    assert first == after
    assert after[1].rank == 1


def test_ordinal_reads_do_not_count_better_players(board):
    _, ordinal = store.read_rank(board.pk, "p2", competition=False)
    _, competition = store.read_rank(board.pk, "p2")

    assert ordinal.better_count is None
    assert (ordinal.rank, competition.better_count) == (3, 1)


def asgi_gather(paths: list[str]) -> list[httpx.Response]:
    """Requests of the same moment: all sent before any is answered."""

    async def get_all() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=application, client=("127.0.0.1", 4000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            return await asyncio.gather(*(http.get(path) for path in paths))

    return asyncio.run(get_all())


def counted(monkeypatch, owner: Any, name: str) -> list[Any]:
    calls: list[Any] = []
    original = getattr(owner, name)

    async def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(args or kwargs)
        return await original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counting)
    return calls


def test_requests_of_the_same_moment_share_one_season_lookup(board, settings, monkeypatch):
    settings.LEADERBOARD_SEASON_CACHE_SECONDS = 60
    lookups = counted(monkeypatch, fast_reads, "_season_get")

    answers = asgi_gather([f"/api/v1/leaderboard/players/p{1 + i % 4}" for i in range(20)])

    assert [a.status_code for a in answers] == [200] * 20
    assert len(lookups) == 1


def test_names_missing_from_the_directory_are_loaded_once_for_the_requests_of_the_moment(
    client, board, monkeypatch
):
    loads = counted(monkeypatch, fast_reads._profile_loads, "_load")
    paths = [f"/api/v1/leaderboard/players/p{1 + i % 4}/around?n=1" for i in range(12)]

    answers = asgi_gather(paths)

    assert len(loads) == 1
    assert [a.content for a in answers] == [client.get(path).content for path in paths]
    assert answers[0].json()["entries"][0]["display_name"] == "Ada"


@pytest.mark.parametrize(
    "path", ["/api/v1/leaderboard/players/p2", "/api/v1/leaderboard/players/p2/around?n=1"]
)
def test_a_banned_players_lookup_says_banned_on_the_event_loop_as_in_django(client, board, path):
    store.players_ban({board.pk: 1}, "p2")

    from_django = client.get(path)
    from_loop = asgi_get(application, path)

    assert from_loop.status_code == from_django.status_code == 404
    assert from_loop.content == from_django.content
    assert from_loop.json()["error"]["code"] == "player_banned"
