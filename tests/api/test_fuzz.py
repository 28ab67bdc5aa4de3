"""Fuzz the API against its own OpenAPI schema: no 5xx, no answer that breaks the schema."""

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import positive_data_acceptance

from config.wsgi import application
from matches.models import GameServer
from server.asgi import application as asgi_application
from tests.factories import BoardFactory, SeasonFactory

schema = schemathesis.openapi.from_wsgi("/api/v1/schema/?format=json", application)


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
    # Every check but "schema-valid data is accepted": the schema cannot say everything the
    # API checks (printable match ids, known slugs), so a 4xx there is not a defect.
    case.call_and_validate(
        headers={"Authorization": f"Api-Key {game_server_key}"},
        excluded_checks=[positive_data_acceptance],
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
    case.call_and_validate(excluded_checks=[positive_data_acceptance])
