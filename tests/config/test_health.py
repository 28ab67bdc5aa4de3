"""Liveness, readiness, metrics and the production settings' deploy checks."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext

from matches.models import PendingStanding

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


def test_ready_when_every_dependency_answers_and_the_mirror_is_current(client, post_scores, season):
    post_scores({"player_id": "p", "points": 1, "match_id": "m"})

    response = client.get("/readyz")

    assert response.status_code == 200
    assert response.json()["checks"] == {
        "postgres": True,
        "redis": True,
        "redis_database": True,
        "broker": True,
        "mirror_lag_seconds": 0.0,
    }


def test_not_ready_while_redis_holds_another_databases_standings(client, post_scores, season):
    # given: this process used Redis, and then another database (a second deployment given the
    # same key prefix) claimed it
    post_scores({"player_id": "p", "points": 1, "match_id": "m"})
    redis.Redis.from_url(settings.REDIS_URL).set(
        f"{settings.LEADERBOARD_KEY_PREFIX}identity", "another database"
    )

    response = client.get("/readyz")

    assert response.status_code == 503
    assert response.json()["checks"]["redis_database"] is False
    assert response.json()["checks"]["redis"] is True


def test_not_ready_while_the_mirror_lags(client, server, season, settings):
    settings.READY_MAX_MIRROR_LAG_SECONDS = 0
    server.post(
        "/api/v1/scores", {"player_id": "p", "points": 1, "match_id": "m"}, format="json"
    )  # committed; its mirror never ran
    assert PendingStanding.objects.count() == 1

    response = client.get("/readyz")

    assert response.status_code == 503
    assert response.json()["status"] == "not_ready"


def test_metrics_expose_latency_results_lag_queue_and_drift(client, post_scores, season):
    post_scores({"player_id": "p", "points": 1, "match_id": "m"})

    text = client.get("/metrics").content.decode()

    for name in (
        "django_http_requests_latency_seconds_by_view_method",
        "leaderboard_results_accepted_total",
        "leaderboard_mirror_lag_seconds",
        "leaderboard_celery_queue_depth",
        "leaderboard_reconciliation_drift",
    ):
        assert name in text


def test_readiness_is_answered_from_memory_between_probes(client, post_scores, season, settings):
    settings.PROBE_CACHE_SECONDS = 60
    post_scores({"player_id": "p", "points": 1, "match_id": "m"})
    first = client.get("/readyz")

    with CaptureQueriesContext(connection) as queries:
        again = client.get("/readyz")

    assert (first.status_code, again.status_code) == (200, 200)
    assert again.json() == first.json()
    assert len(queries) == 0


def test_metrics_are_collected_at_most_once_per_interval(client, season, settings):
    settings.PROBE_CACHE_SECONDS = 60
    first = client.get("/metrics")

    with CaptureQueriesContext(connection) as queries:
        again = client.get("/metrics")

    assert again.status_code == 200
    assert again["Content-Type"] == first["Content-Type"]
    assert again.content == first.content
    assert len(queries) == 0


def test_probes_are_answered_afresh_when_their_cache_is_off(client, season, settings):
    settings.PROBE_CACHE_SECONDS = 0
    client.get("/readyz")

    with CaptureQueriesContext(connection) as queries:
        client.get("/readyz")

    assert len(queries) >= 2


def test_check_deploy_passes_with_the_production_settings():
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "SECRET_KEY": secrets.token_urlsafe(64),
        "ALLOWED_HOSTS": "leaderboard.example.com",
    }

    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode == 0, result.stdout + result.stderr


def test_production_settings_refuse_the_development_secret():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.production"}
    env.pop("SECRET_KEY", None)

    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr
