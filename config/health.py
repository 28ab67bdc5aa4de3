"""Liveness, readiness, and the trivial API view the benchmark uses as the framework's ceiling."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView


def healthz(request: HttpRequest) -> JsonResponse:
    """The process is alive and serving; says nothing about its backing stores."""
    return JsonResponse({"status": "ok"})


class PingView(APIView):
    """As little work as an API view can do: the benchmark's framework ceiling."""

    @extend_schema(
        responses=inline_serializer("Ping", {"ok": serializers.BooleanField()}),
        summary="Trivial JSON answer (framework ceiling)",
    )
    def get(self, request: Request) -> Response:
        return Response({"ok": True})
