"""Liveness, readiness, and the trivial API view the benchmark uses as the framework's ceiling."""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboards import store
from leaderboards.services import mirror_lag_seconds

logger = logging.getLogger(__name__)


def healthz(request: HttpRequest) -> JsonResponse:
    """The process is alive and serving; says nothing about its backing stores."""
    return JsonResponse({"status": "ok"})


def _postgres() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        return cursor.fetchone() == (1,)


def _broker() -> bool:
    from config.celery import app

    with app.connection_for_write() as broker:
        broker.ensure_connection(max_retries=1, timeout=2)
    return True


def readyz(request: HttpRequest) -> JsonResponse:
    """Ready to take traffic: PostgreSQL, Redis and the broker answer, and the mirror is less
    than READY_MAX_MIRROR_LAG_SECONDS behind."""
    checks: dict[str, object] = {}
    for name, check in (("postgres", _postgres), ("redis", store.ping), ("broker", _broker)):
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
        all(checks[name] for name in ("postgres", "redis", "broker"))
        and lag is not None
        and lag < settings.READY_MAX_MIRROR_LAG_SECONDS
    )
    return JsonResponse(
        {"status": "ready" if ready else "not_ready", "checks": checks},
        status=200 if ready else 503,
    )


class PingView(APIView):
    """As little work as an API view can do: the benchmark's framework ceiling."""

    @extend_schema(
        responses=inline_serializer("Ping", {"ok": serializers.BooleanField()}),
        summary="Trivial JSON answer (framework ceiling)",
    )
    def get(self, request: Request) -> Response:
        return Response({"ok": True})
