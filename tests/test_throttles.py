"""Rate limits by client address: who the client is behind proxies, and the pages' own limit."""

from ipaddress import ip_network

import pytest

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
