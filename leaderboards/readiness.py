"""The readiness probe (/readyz): this deployment can take traffic when PostgreSQL, the ranking
store's Redis and the broker answer and the mirror is not too far behind. Its answer is shared
between probes like the other probes' (config/building_blocks/health.py); config/urls.py mounts it
at the root.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.urls import path

from config.building_blocks.health import probe_answer
from config.celery import app

from . import store
from .services import mirror_lag_seconds

logger = logging.getLogger(__name__)


def _postgres() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        return cursor.fetchone() == (1,)


def _broker() -> bool:
    with app.connection_for_write() as broker:
        broker.ensure_connection(max_retries=1, timeout=2)
    return True


def readyz(request: HttpRequest) -> JsonResponse:
    """Ready to take traffic: PostgreSQL, Redis and the broker answer, Redis holds this
    database's standings (not another's: two deployments on one key prefix), and the mirror is
    less than READY_MAX_MIRROR_LAG_SECONDS behind."""
    body, status = probe_answer("readyz", _readiness)
    return JsonResponse(body, status=status)


def _readiness() -> tuple[dict[str, Any], int]:
    checks: dict[str, object] = {}
    for name, check in (
        ("postgres", _postgres),
        ("redis", store.ping),
        ("redis_database", store.identity_current),
        ("broker", _broker),
    ):
        try:
            checks[name] = bool(check())
        except Exception as exc:
            logger.warning("readiness check %s failed: %s", name, exc)
            checks[name] = False
    lag = None
    if checks["postgres"]:
        lag = mirror_lag_seconds()
    checks["mirror_lag_seconds"] = lag
    ready = (
        all(checks[name] for name in ("postgres", "redis", "redis_database", "broker"))
        and lag is not None
        and lag < settings.READY_MAX_MIRROR_LAG_SECONDS
    )
    return {"status": "ready" if ready else "not_ready", "checks": checks}, 200 if ready else 503


urlpatterns = [path("readyz", readyz, name="readyz")]
