"""Liveness, metrics, the probes' shared answers, and the trivial API view the benchmark uses as
the framework's ceiling. (Readiness, which asks the ranking store and its mirror, is the
leaderboards app's: leaderboards/readiness.py.)

/readyz queries PostgreSQL, Redis and the broker, and /metrics PostgreSQL and the broker, on
every call: each process computes each answer at most once per PROBE_CACHE_SECONDS (one thread
computes while the others wait for its answer), so a storm of probes or scrapes costs the stores
nothing more. They are not rate limited per address: probes come from a few addresses of the
platform, which a limit would turn away.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django_prometheus.exports import ExportToDjangoView
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.building_blocks.caching import RecentAnswers
from config.building_blocks.schema import StorelessSchema

# The latest answer of each probe ("readyz", "metrics") in this process.
probe_answers: RecentAnswers[Any] = RecentAnswers(
    seconds=lambda: settings.PROBE_CACHE_SECONDS, maxsize=lambda: 2
)
_probe_locks = {"readyz": threading.Lock(), "metrics": threading.Lock()}


def probe_answer(name: str, build: Callable[[], Any]) -> Any:
    """The probe's latest answer, built again by one thread when it is older than allowed."""
    with _probe_locks[name]:
        return probe_answers.get_or_build(name, build)


def healthz(request: HttpRequest) -> JsonResponse:
    """The process is alive and serving; says nothing about its backing stores."""
    return JsonResponse({"status": "ok"})


def metrics(request: HttpRequest) -> HttpResponse:
    """Prometheus text, as django-prometheus exports it."""
    content, content_type = probe_answer("metrics", lambda: _metrics_page(request))
    return HttpResponse(content, content_type=content_type)


def _metrics_page(request: HttpRequest) -> tuple[bytes, str]:
    page = ExportToDjangoView(request)
    return page.content, page["Content-Type"]


class PingView(APIView):
    """As little work as an API view can do: the benchmark's framework ceiling."""

    # It asks no store, so it never answers 503 (the schema says so).
    schema = StorelessSchema()

    @extend_schema(
        responses=inline_serializer("Ping", {"ok": serializers.BooleanField()}),
        summary="Trivial JSON answer (framework ceiling)",
    )
    def get(self, request: Request) -> Response:
        return Response({"ok": True})
