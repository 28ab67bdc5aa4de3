"""Domain errors and the one place that turns any API failure into the standard error body.

Every error a client sees is `{"error": {"code", "message", "details"}}`; no traceback ever leaves.
"""

import logging
from typing import Any

import redis.exceptions
from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.response import Response

logger = logging.getLogger(__name__)


class DomainError(Exception):
    """A rule of the game was broken; services raise these and the API renders them."""

    status_code = status.HTTP_400_BAD_REQUEST
    code = "bad_request"

    def __init__(self, message: str, *, details: Any = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details
        if code is not None:
            self.code = code


class Forbidden(DomainError):
    status_code = status.HTTP_403_FORBIDDEN
    code = "forbidden"


class NotFound(DomainError):
    status_code = status.HTTP_404_NOT_FOUND
    code = "not_found"


class Conflict(DomainError):
    status_code = status.HTTP_409_CONFLICT
    code = "conflict"


class InvalidInput(DomainError):
    status_code = status.HTTP_400_BAD_REQUEST
    code = "validation_error"


class Unavailable(DomainError):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    code = "unavailable"


def error_body(code: str, message: str, details: Any = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details}}


_DRF_CODES: dict[type[exceptions.APIException], str] = {
    exceptions.ParseError: "malformed_json",
    exceptions.NotAuthenticated: "not_authenticated",
    exceptions.AuthenticationFailed: "authentication_failed",
    exceptions.PermissionDenied: "permission_denied",
    exceptions.NotFound: "not_found",
    exceptions.MethodNotAllowed: "method_not_allowed",
    exceptions.NotAcceptable: "not_acceptable",
    exceptions.UnsupportedMediaType: "unsupported_media_type",
    exceptions.Throttled: "rate_limited",
    exceptions.ValidationError: "validation_error",
}


def _drf_code(exc: exceptions.APIException) -> str:
    for cls in type(exc).__mro__:
        if cls in _DRF_CODES:
            return _DRF_CODES[cls]
    return str(getattr(exc, "default_code", "error"))


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    """DRF's EXCEPTION_HANDLER: map every exception to the standard error body."""
    status_code, body, headers = api_error(exc)
    return Response(body, status=status_code, headers=headers)


def api_error(exc: Exception) -> tuple[int, dict[str, Any], dict[str, str]]:
    """The status, standard error body and headers of an exception, for any server that
    answers the API (DRF's views, and the event loop's reads in leaderboards/fast_reads.py)."""
    if isinstance(exc, DomainError):
        return exc.status_code, error_body(exc.code, exc.message, exc.details), {}
    if isinstance(exc, Http404):
        return 404, error_body("not_found", "Not found."), {}
    if isinstance(exc, exceptions.APIException):
        headers = {}
        if isinstance(exc, exceptions.Throttled) and exc.wait is not None:
            headers["Retry-After"] = str(max(1, int(exc.wait + 0.999)))
        if getattr(exc, "auth_header", None):
            headers["WWW-Authenticate"] = exc.auth_header
        if isinstance(exc, exceptions.ValidationError):
            message = "The request is invalid."
            details: Any = exc.detail
        else:
            message = str(exc.detail)
            details = None
        return exc.status_code, error_body(_drf_code(exc), message, details), headers
    if isinstance(
        exc,
        OperationalError
        | InterfaceError
        | redis.exceptions.ConnectionError
        | redis.exceptions.TimeoutError
        # A Redis Cluster with a node down or failing over: its slots answer CLUSTERDOWN,
        # TRYAGAIN or no node at all until it is back.
        | redis.exceptions.ClusterError
        | redis.exceptions.TryAgainError
        | redis.exceptions.RedisClusterException,
    ):
        # The store behind the API is down or restarting: the request was not confirmed.
        logger.warning("backing store unavailable: %s", exc)
        return (
            503,
            error_body("unavailable", "The service is temporarily unavailable; retry shortly."),
            {"Retry-After": "1"},
        )
    if isinstance(exc, DatabaseError):
        logger.exception("database error")
        return (
            503,
            error_body("unavailable", "The database could not complete the request."),
            {"Retry-After": "1"},
        )
    logger.exception("unhandled API error")
    return 500, error_body("internal_error", "Internal server error."), {}


def _is_api(request: Any) -> bool:
    return request.path.startswith("/api/")


def json_not_found(request: Any, exception: Exception | None = None) -> HttpResponse:
    """404: the error body under /api/, the HTML page (templates/404.html) everywhere else."""
    if _is_api(request):
        return JsonResponse(error_body("not_found", "Not found."), status=404)
    # Pages raise Http404 with a sentence for the reader; the URL resolver's 404 carries none.
    message = exception.args[0] if exception is not None and exception.args else None
    return render(
        request,
        "404.html",
        {"message": message if isinstance(message, str) else None},
        status=404,
    )


def json_server_error(request: Any) -> HttpResponse:
    """500: the error body under /api/, a plain page (templates/500.html) everywhere else."""
    if _is_api(request):
        return JsonResponse(error_body("internal_error", "Internal server error."), status=500)
    return defaults.server_error(request)
