"""Liveness, readiness, metrics, and the trivial API view the benchmark uses as the framework's
ceiling.

/readyz queries PostgreSQL, Redis and the broker, and /metrics PostgreSQL and the broker, on
every call: each process computes each answer at most once per PROBE_CACHE_SECONDS (one thread
computes while the others wait for its answer), so a storm of probes or scrapes costs the stores
nothing more. They are not rate limited per address: probes come from a few addresses of the
platform, which a limit would turn away.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django_prometheus.exports import ExportToDjangoView
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.caching import RecentAnswers
from leaderboards import store
from leaderboards.services import mirror_lag_seconds

logger = logging.getLogger(__name__)

# The latest answer of each probe ("readyz", "metrics") in this process.
probe_answers: RecentAnswers[Any] = RecentAnswers(
    seconds=lambda: settings.PROBE_CACHE_SECONDS, maxsize=lambda: 2
)
_probe_locks = {"readyz": threading.Lock(), "metrics": threading.Lock()}


def _probe_answer(name: str, build: Callable[[], Any]) -> Any:
    with _probe_locks[name]:
        return probe_answers.get_or_build(name, build)


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
    body, status = _probe_answer("readyz", _readiness)
    return JsonResponse(body, status=status)


def _readiness() -> tuple[dict[str, Any], int]:
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
    return {"status": "ready" if ready else "not_ready", "checks": checks}, 200 if ready else 503


def metrics(request: HttpRequest) -> HttpResponse:
    """Prometheus text, as django-prometheus exports it."""
    content, content_type = _probe_answer("metrics", lambda: _metrics_page(request))
    return HttpResponse(content, content_type=content_type)


def _metrics_page(request: HttpRequest) -> tuple[bytes, str]:
    page = ExportToDjangoView(request)
    return page.content, page["Content-Type"]


class PingView(APIView):
    """As little work as an API view can do: the benchmark's framework ceiling."""

    @extend_schema(
        responses=inline_serializer("Ping", {"ok": serializers.BooleanField()}),
        summary="Trivial JSON answer (framework ceiling)",
    )
    def get(self, request: Request) -> Response:
        return Response({"ok": True})
