"""Building blocks shared by every app's API: strict input fields and query validation."""

from __future__ import annotations

import io
from typing import Any

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema_field
from rest_framework import exceptions, serializers
from rest_framework.parsers import JSONParser

from config.building_blocks.errors import InvalidInput
from config.building_blocks.player_ids import PLAYER_ID_PATTERN, PLAYER_ID_RULE
from config.building_blocks.slugs import OPTIONAL_SLUG_PATTERN, SLUG_PATTERN


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer only: no booleans, floats, strings or NaN that DRF would coerce."""

    default_error_messages = {"invalid": "Must be a JSON integer."}

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictCharField(serializers.CharField):
    """A JSON string only: numbers are not turned into text silently."""

    default_error_messages = {"invalid": "Must be a JSON string."}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


NOT_AN_OBJECT = "Expected a JSON object."
UNKNOWN_FIELD = "Unknown field."


class StrictSerializer(serializers.Serializer):
    """Rejects fields it does not know, instead of silently dropping them."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, dict):
            raise serializers.ValidationError({"non_field_errors": [NOT_AN_OBJECT]})
        unknown = sorted(set(data) - set(self.fields))
        if unknown:
            raise serializers.ValidationError({name: [UNKNOWN_FIELD] for name in unknown})
        return super().to_internal_value(data)


@extend_schema_field(OpenApiTypes.DURATION)
class IsoDurationField(serializers.DurationField):
    """A duration in ISO 8601 (`P0DT01H00M00S`), as the schema's `format: duration` says."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(format="iso-8601", **kwargs)


INVALID_QUERY = "Invalid query parameters."


def validate_query(serializer_class: type[serializers.Serializer], params: Any) -> dict[str, Any]:
    """Validate query parameters; a bad one is a 400 with the standard body. Given as a plain
    dict (the last value of a repeated name, as QueryDict.get reads it), since DRF reads an
    empty value in a form's QueryDict as "not given", and an empty number is no integer."""
    serializer = serializer_class(data=_query_values(params))
    if not serializer.is_valid():
        raise InvalidInput(INVALID_QUERY, details=serializer.errors)
    return dict(serializer.validated_data)


def validate_query_with(serializer: serializers.Serializer, params: Any) -> dict[str, Any]:
    """validate_query through one serializer kept for every call, for query strings validated
    in bursts on the event loop (the live sockets' URLs): a serializer made per call leaves its
    copies of the fields and their validators in reference cycles that only the cyclic
    collector frees, megabytes of them after a burst. Validating keeps no state in the
    serializer, and the event loop runs one validation at a time."""
    try:
        return dict(serializer.run_validation(_query_values(params)))
    except serializers.ValidationError as exc:
        raise InvalidInput(INVALID_QUERY, details=exc.detail) from None


def _query_values(params: Any) -> Any:
    return params.dict() if hasattr(params, "dict") else params


class PayloadTooLarge(exceptions.APIException):
    status_code = 413
    default_detail = "The request body is too large."
    default_code = "payload_too_large"


class LimitedJSONParser(JSONParser):
    """JSON bodies up to MAX_REQUEST_BODY_BYTES; NaN, Infinity and absurd nesting are refused.

    Under the ASGI server, config.building_blocks.request_body_limit.RequestBodyLimit has refused
    larger bodies before they were read; this check holds under a WSGI server, whose input stream
    is read lazily."""

    def parse(
        self,
        stream: Any,
        media_type: str | None = None,
        parser_context: dict[str, Any] | None = None,
    ) -> Any:
        limit = settings.MAX_REQUEST_BODY_BYTES
        request = (parser_context or {}).get("request")
        declared = request.META.get("CONTENT_LENGTH") if request is not None else None
        if declared and declared.isdigit() and int(declared) > limit:
            raise PayloadTooLarge(f"The request body may be at most {limit} bytes.")
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise PayloadTooLarge(f"The request body may be at most {limit} bytes.")
        try:
            return super().parse(io.BytesIO(raw), media_type, parser_context)
        except RecursionError as exc:
            raise exceptions.ParseError("JSON nested too deeply.") from exc


PLAYER_ID_PATH = OpenApiParameter(
    "player_id",
    str,
    OpenApiParameter.PATH,
    pattern=PLAYER_ID_PATTERN,
    description=f"{PLAYER_ID_RULE}.",
)
SLUG_PATH = OpenApiParameter("slug", str, OpenApiParameter.PATH, pattern=SLUG_PATTERN)
SEASON_QUERY = OpenApiParameter(
    "season",
    str,
    pattern=OPTIONAL_SLUG_PATTERN,
    description="Season slug (default: the running season).",
)
