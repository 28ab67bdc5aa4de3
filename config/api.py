"""Building blocks shared by every app's API: strict input fields and query validation."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from config.errors import InvalidInput


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


class StrictSerializer(serializers.Serializer):
    """Rejects fields it does not know, instead of silently dropping them."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, dict):
            raise serializers.ValidationError({"non_field_errors": ["Expected a JSON object."]})
        unknown = sorted(set(data) - set(self.fields))
        if unknown:
            raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
        return super().to_internal_value(data)


def validate_query(serializer_class: type[serializers.Serializer], params: Any) -> dict[str, Any]:
    """Validate query parameters; a bad one is a 400 with the standard body."""
    serializer = serializer_class(data=params)
    if not serializer.is_valid():
        raise InvalidInput("Invalid query parameters.", details=serializer.errors)
    return dict(serializer.validated_data)
