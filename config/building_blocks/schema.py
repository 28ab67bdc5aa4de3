"""The OpenAPI schema as strict as the server: each operation lists the error statuses it can
answer, derived from its view (a body, query parameters, path parameters, authentication,
throttles), plus those a view declares with `errors()`; every one is the error body (the `Error`
component). Enums the server names are one component each (ENUM_NAME_OVERRIDES), query
parameters' included."""

from __future__ import annotations

import re
from typing import Any

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import (
    ResolvedComponent,
    force_instance,
    list_hash,
    load_enum_name_overrides,
)
from drf_spectacular.utils import (
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema_serializer,
)
from rest_framework import serializers

from config.building_blocks.api import StrictSerializer

ERROR_STATUSES = {
    400: "Invalid input (validation_error, malformed_json, ...); nothing was written.",
    401: "Missing, unknown, expired or revoked game-server key, or one sent with another scheme.",
    403: "The key may not do this (board_not_allowed, player_not_in_scope); nothing was written.",
    404: "Unknown board, season, player or clan.",
    409: "Conflicts with the season or stored results (season_closed, conflict, ...).",
    413: "The request body is too large.",
    415: "The request body is not application/json.",
    429: "Rate limited; see Retry-After.",
    503: "PostgreSQL or Redis is unavailable; the request was not confirmed.",
}
_RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds to wait before trying again.",
        "schema": {"type": "integer", "minimum": 1},
    }
}
_HEADERS = {429: _RETRY_AFTER, 503: _RETRY_AFTER}


@extend_schema_serializer(component_name="ErrorDetail")
class ErrorDetailOut(serializers.Serializer):
    code = serializers.CharField(help_text="What went wrong, for programs: `season_closed`.")
    message = serializers.CharField(help_text="What went wrong, for people.")
    details = serializers.JSONField(
        allow_null=True, help_text="The fields or items at fault, when there are any."
    )


@extend_schema_serializer(component_name="Error")
class ErrorOut(serializers.Serializer):
    """Every error the API answers, whatever its status."""

    error = ErrorDetailOut()


def errors(*statuses: int) -> dict[int, OpenApiResponse]:
    """Error statuses an operation answers beyond those its view implies (ApiSchema), for
    `extend_schema(responses={..., **errors(404, 409)})`."""
    return {status: OpenApiResponse(ErrorOut, ERROR_STATUSES[status]) for status in statuses}


class ApiSchema(AutoSchema):
    """drf-spectacular's AutoSchema, plus the error statuses an operation's view implies:

    - 400 for a body or query parameters (a path parameter a view checks declares it);
    - 401 when the view authenticates (a key that is wrong is refused even where none is needed);
    - 404 for path parameters (a value that matches no route as well as a thing not found);
    - 413 and 415 for a body (its size, its media type);
    - 429 when the view is throttled;
    - 503 unless the view reads no store (`schema = StorelessSchema()`).

    And a StrictSerializer's request object says what the server does with a field it does
    not know: `additionalProperties: false`. Not on answers: an answer may gain a field in a
    later version, which a client generated with `false` would then refuse instead of ignoring.
    """

    # A class attribute: drf-spectacular makes an instance of the view's schema class per
    # operation, without arguments.
    reads_stores = True

    def get_operation(self, *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        operation = super().get_operation(*args, **kwargs)
        if operation is None:
            return None
        # A body that is one of several shapes (a result or a batch) is never optional, though
        # drf-spectacular marks only a serializer with required fields so.
        if "requestBody" in operation and isinstance(
            self.get_request_serializer(), PolymorphicProxySerializer
        ):
            operation["requestBody"]["required"] = True
        responses = operation.setdefault("responses", {})
        error = self.resolve_serializer(ErrorOut, "response").ref
        for status in sorted(self._implied_statuses(operation)):
            responses.setdefault(
                str(status),
                {
                    "description": ERROR_STATUSES[status],
                    "content": {"application/json": {"schema": error}},
                },
            )
        for status, headers in _HEADERS.items():
            if str(status) in responses:
                responses[str(status)]["headers"] = headers
        operation["responses"] = dict(sorted(responses.items()))
        return operation

    def resolve_serializer(
        self, serializer: Any, direction: Any, bypass_extensions: bool = False
    ) -> ResolvedComponent:
        component = super().resolve_serializer(serializer, direction, bypass_extensions)
        strict = isinstance(force_instance(serializer), StrictSerializer)
        if direction == "request" and strict and component.schema is not None:
            component.schema["additionalProperties"] = False
            for name, field in component.schema.get("properties", {}).items():
                component.schema["properties"][name] = _blank_in_pattern(field)
        return component

    def _implied_statuses(self, operation: dict[str, Any]) -> set[int]:
        located = {parameter["in"] for parameter in operation.get("parameters", [])}
        statuses = set()
        if "requestBody" in operation:
            statuses |= {400, 413, 415}
        if "query" in located:
            statuses.add(400)
        if "path" in located:
            statuses.add(404)
        if self.view.authentication_classes:
            statuses.add(401)
        if self.view.throttle_classes:
            statuses.add(429)
        if self.reads_stores:
            statuses.add(503)
        return statuses


class StorelessSchema(ApiSchema):
    """The schema of a view that asks neither PostgreSQL nor Redis: it never answers 503."""

    reads_stores = False


def _blank_in_pattern(field: dict[str, Any]) -> dict[str, Any]:
    """A text field that may be blank is drawn by drf-spectacular as a oneOf of its rule and an
    empty string, which a generated client turns into a union of two strings; where the rule's
    pattern admits "" already, the rule alone says the same."""
    forms = field.get("oneOf", [])
    if len(forms) != 2 or forms[1] != {"type": "string", "maxLength": 0}:
        return field
    pattern = forms[0].get("pattern")
    if pattern is None or re.match(pattern, "") is None:
        return field
    rest = {key: value for key, value in field.items() if key != "oneOf"}
    return {**forms[0], **rest}


def named_enum_parameters(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """drf-spectacular POSTPROCESSING_HOOK, after its enum hook (which names the enums of
    fields only): a query parameter whose choices are a named enum (ENUM_NAME_OVERRIDES) refers
    to its component, so a client has one enum class for them, not one per parameter."""
    names = load_enum_name_overrides()
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                schema = parameter.get("schema", {})
                if "enum" not in schema:
                    continue
                name = names.get(list_hash([(value, value) for value in schema["enum"]]))
                if name is None:
                    continue
                schemas.setdefault(name, {"enum": schema["enum"], "type": schema["type"]})
                parameter["schema"] = {"$ref": f"#/components/schemas/{name}"}
    result["components"]["schemas"] = dict(sorted(schemas.items()))
    return result
