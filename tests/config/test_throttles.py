"""Rate limits by client address: who the client is behind proxies, and the pages' own limit."""

import os
import subprocess
import sys
from ipaddress import ip_network
from pathlib import Path

import pytest
import uvicorn

from tests.asgi import asgi_get

pytestmark = pytest.mark.django_db

TOP = "/api/v1/leaderboard/top"


@pytest.fixture
def rates(settings):
    """Set the limits per scope; an hour's window, so no test straddles two windows."""

    def set_rates(**rates: str) -> None:
        settings.REST_FRAMEWORK = {
            **settings.REST_FRAMEWORK,
            "DEFAULT_THROTTLE_RATES": {"public": None, "pages": None, "game_server": None, **rates},
        }

    return set_rates


def test_a_forwarded_for_header_from_the_client_does_not_change_its_bucket(client, season, rates):
    rates(public="3/h")

    codes = [client.get(TOP, HTTP_X_FORWARDED_FOR=f"198.51.100.{i}").status_code for i in range(4)]

    assert codes == [200, 200, 200, 429]


def test_behind_trusted_proxies_the_client_is_the_rightmost_untrusted_address(
    client, season, rates, settings
):
    rates(public="3/h")
    settings.TRUSTED_PROXIES = [ip_network("10.0.0.0/8")]

    # The client (203.0.113.7) forges the left part; two proxies of ours appended the rest.
    codes = [
        client.get(
            TOP,
            REMOTE_ADDR="10.0.0.5",
            HTTP_X_FORWARDED_FOR=f"198.51.100.{i}, 203.0.113.7, 10.0.0.9",
        ).status_code
        for i in range(4)
    ]
    same_client_directly = client.get(TOP, REMOTE_ADDR="203.0.113.7")
    another_client = client.get(
        TOP, REMOTE_ADDR="10.0.0.5", HTTP_X_FORWARDED_FOR="203.0.113.8, 10.0.0.9"
    )

    assert codes == [200, 200, 200, 429]
    assert same_client_directly.status_code == 429
    assert another_client.status_code == 200


def test_a_forwarded_for_header_is_ignored_unless_it_comes_from_a_trusted_proxy(
    client, season, rates, settings
):
    rates(public="3/h")
    settings.TRUSTED_PROXIES = [ip_network("10.0.0.0/8")]

    codes = [
        client.get(TOP, REMOTE_ADDR="192.0.2.1", HTTP_X_FORWARDED_FOR=f"198.51.100.{i}").status_code
        for i in range(4)
    ]

    assert codes == [200, 200, 200, 429]


def test_pages_are_rate_limited_per_address(client, season, rates):
    rates(pages="2/h")

    codes = [client.get("/", HTTP_X_FORWARDED_FOR=f"198.51.100.{i}").status_code for i in range(2)]
    limited = client.get("/players/nobody/")
    other_address = client.get("/", REMOTE_ADDR="192.0.2.1")

    assert codes == [200, 200]
    assert limited.status_code == 429
    assert limited["Content-Type"] == "text/html; charset=utf-8"
    assert 1 <= int(limited["Retry-After"]) <= 3600
    assert "<h1>Too many requests</h1>" in limited.content.decode()
    assert other_address.status_code == 200


def test_pages_and_the_api_count_apart(client, season, rates):
    rates(public="1/h", pages="1/h")

    api = client.get(TOP)
    page = client.get("/")

    assert (api.status_code, page.status_code) == (200, 200)


# The serving stack's tests: Django's views run on a2wsgi's threads and the event loop's reads
# look seasons up on a thread, so each needs committed rows.
asgi_db = pytest.mark.django_db(transaction=True)

RANK = "/api/v1/leaderboard/players/p1"  # answered on the event loop (leaderboards/fast_reads)
BOARDS = "/api/v1/boards"  # answered by Django's view


def _procfile_web_app() -> object:
    """The ASGI app as the Procfile's web line has uvicorn assemble it (its own middleware
    included), its arguments expanded by the shell as `make run` would."""
    line = next(
        line.removeprefix("web:").strip()
        for line in (Path(__file__).parents[2] / "Procfile").read_text().splitlines()
        if line.startswith("web:")
    )
    expanded = subprocess.run(
        ["sh", "-c", f'set -- {line}; shift; printf "%s\\0" "$@"'],
        env={**os.environ, "PORT": "8000"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")[:-1]
    options = sys.modules["uvicorn.main"].main.make_context("uvicorn", expanded).params
    config = uvicorn.Config(
        app=options["app"],
        proxy_headers=options["proxy_headers"],
        forwarded_allow_ips=options["forwarded_allow_ips"],
    )
    config.load()
    return config.loaded_app


@asgi_db
def test_a_local_proxy_passing_the_clients_header_does_not_give_it_new_buckets(
    post_scores, season, rates, settings
):
    # given: no trusted proxies, and a proxy on this machine that passes X-Forwarded-For on
    # as the client wrote it
    post_scores({"player_id": "p1", "points": 5, "match_id": "m1"})
    rates(public="3/h")
    settings.TRUSTED_PROXIES = []
    served = _procfile_web_app()

    # when: the client writes a new address into every request
    codes = [
        asgi_get(served, path, {"X-Forwarded-For": f"198.51.100.{i}"}).status_code
        for i, path in enumerate([RANK, BOARDS, RANK, BOARDS])
    ]

    # then: every request counts against the connection's address
    assert codes == [200, 200, 200, 429]


@asgi_db
def test_every_forwarded_for_line_is_read_and_the_left_most_entries_are_the_clients_words(
    post_scores, season, rates, settings
):
    # given: two proxies of ours in 10.0.0.0/8 that add a line of their own below the one the
    # client forged: the first the client's address (203.0.113.7), the second the first's
    post_scores({"player_id": "p1", "points": 5, "match_id": "m1"})
    rates(public="3/h")
    settings.TRUSTED_PROXIES = [ip_network("10.0.0.0/8")]
    served = _procfile_web_app()

    def get(path: str, forged: str) -> int:
        lines = [("X-Forwarded-For", forged), ("X-Forwarded-For", "203.0.113.7, 10.0.0.9")]
        return asgi_get(served, path, lines, client="10.0.0.5").status_code

    # when: the event loop's reads and Django's views both see the client's requests
    codes = [get(path, f"198.51.100.{i}") for i, path in enumerate([RANK, BOARDS, RANK])]
    refused_on_the_loop = get(RANK, "198.51.100.50")
    refused_by_django = get(BOARDS, "198.51.100.51")
    another_client = asgi_get(
        served,
        RANK,
        [("X-Forwarded-For", "203.0.113.8"), ("X-Forwarded-For", "10.0.0.9")],
        client="10.0.0.5",
    )

    # then: one bucket, the right-most untrusted address of all the lines
    assert codes == [200, 200, 200]
    assert (refused_on_the_loop, refused_by_django) == (429, 429)
    assert another_client.status_code == 200
