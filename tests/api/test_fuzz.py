"""Fuzz the API against its own OpenAPI schema with every check schemathesis has: no 5xx, no
answer that breaks the schema, every request the schema refuses refused, every request it admits
accepted (or answered with a status the schema allows for it), methods and auth as declared."""

from typing import Any

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import CHECKS, load_all_checks
from schemathesis.specs.openapi.checks import positive_data_acceptance

from config.wsgi import application
from matches.models import GameServer
from server.asgi import application as asgi_application
from tests.factories import BoardFactory, SeasonFactory

schema = schemathesis.openapi.from_wsgi("/api/v1/schema/?format=json", application)

# Refusals of schema-valid requests by rules no OpenAPI 3.0 schema can state, by error code.
# Every other refusal of one fails, as positive_data_acceptance says.
_STORED_OR_CROSS_FIELD_RULES = {
    # A profile's clan must exist: stored data, as a board must (a 404 the schema allows).
    "clan_not_found",
    # Which segment dimensions exist is the boards' configuration, not a rule of the request.
    "unknown_segment_dimension",
    # A player's own id in their friends list: a rule across the path and the body.
    "friend_is_self",
}


def _refused_by_a_rule_beyond_the_schema(response: Any) -> bool:
    # The header's value is a list or a string, as the transport gives it.
    if response.status_code != 400 or "json" not in str(response.headers.get("content-type")):
        return False
    error = response.json()["error"]
    if error["code"] in _STORED_OR_CROSS_FIELD_RULES:
        return True
    fields = (error["details"] or {}).get("fields", {})
    # The names of a profile's segment dimensions: OpenAPI 3.0 has no rule for an object's
    # property names (propertyNames is 3.1's); they are refused as dimensions no board has.
    if list(fields) == ["segments"]:
        return True
    # A result's ended_at in the future: a rule of the clock, not of the value.
    return fields == {"ended_at": ["In the future."]}


def positive_data_acceptance_but_stored_rules(ctx: Any, response: Any, case: Any) -> bool | None:
    if _refused_by_a_rule_beyond_the_schema(response):
        return None
    return positive_data_acceptance(ctx, response, case)


def every_check() -> list[Any]:
    load_all_checks()
    return [check for check in CHECKS.get_all() if check is not positive_data_acceptance] + [
        positive_data_acceptance_but_stored_rules
    ]


@pytest.fixture
def keep_test_connection():
    """Like Django's test client: the WSGI app must not close the test transaction's
    connection when a request finishes."""
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    yield
    for signal in (request_started, request_finished):
        signal.connect(close_old_connections)


@pytest.fixture
def game_server_key(db, keep_test_connection):
    SeasonFactory(board=BoardFactory(slug="global"), slug="s1")
    _, key = GameServer.objects.create_key(name="fuzz")
    return key


@pytest.mark.django_db
@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_the_api_holds_its_schema(case, game_server_key):
    case.call_and_validate(
        headers={"Authorization": f"Api-Key {game_server_key}"}, checks=every_check()
    )


# The hot reads as the server answers them: the event loop in front of Django (server.asgi).
# It reads seasons on threads of its own, so the data must be committed (transactional test).
hot_reads = schemathesis.openapi.from_asgi("/api/v1/schema/?format=json", asgi_application)


@pytest.fixture
def committed_season(transactional_db):
    SeasonFactory(board=BoardFactory(slug="global"), slug="s1")


@hot_reads.include(path_regex=r"^/api/v1/leaderboard/(top|players/)").parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_the_hot_reads_hold_the_schema_on_the_event_loop(case, committed_season):
    case.call_and_validate(checks=every_check())
