"""Fields of a JSON body declared once: checked fast on the hot path, and described by a DRF
serializer built from the same declaration (the OpenAPI schema's source), so the two cannot
drift apart.

Checking a body through a DRF serializer cost two thirds of a 100-result batch's time in the
web process (py-spy, in the benchmark); the checks here are plain Python over the same rules,
with the same messages.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.utils.dateparse import parse_datetime
from drf_spectacular.extensions import OpenApiSerializerExtension
from rest_framework import serializers
from rest_framework.validators import ProhibitSurrogateCharactersValidator

from config.building_blocks.api import (
    NOT_AN_OBJECT,
    UNKNOWN_FIELD,
    StrictCharField,
    StrictIntegerField,
    StrictSerializer,
)

REQUIRED = "This field is required."

# Printable text as the API checks it (match ids, a search by name): no control character
# (Unicode's category Cc: U+0000-U+001F, U+007F-U+009F) and no line or paragraph separator.
# Not str.isprintable(): its set follows the Unicode version of the Python that runs (every code
# point not yet assigned is "unprintable"), so no pattern in the schema or a client could state
# it. Cc is closed by Unicode's stability policy, so this pattern is the whole rule, for ever.
PRINTABLE_CHARACTER = r"[^\u0000-\u001F\u007F-\u009F\u2028\u2029]"
PRINTABLE_RULE = "printable characters: no control characters or line separators"
# The schema shows it as the field's pattern (^...$: drf-spectacular writes \A and \Z so).
printable_validator = RegexValidator(rf"\A{PRINTABLE_CHARACTER}*\Z", f"Use {PRINTABLE_RULE}.")
_printable_regex = re.compile(rf"\A{PRINTABLE_CHARACTER}*\Z")


def printable(value: str) -> bool:
    return _printable_regex.match(value) is not None


# A JSON string may escape half of a surrogate pair alone ("\ud800"): no text PostgreSQL or the
# pages could store. DRF's CharField refuses it (the schema's serializers); the fast check too,
# with DRF's words.
_surrogate = re.compile(r"[\ud800-\udfff]")
_surrogate_refused = ProhibitSurrogateCharactersValidator.message

Validator = Callable[[Any], None]


class FieldRefused(Exception):
    """A value a field does not take; the message is the API's."""


@dataclass(frozen=True, slots=True)
class Check:
    """A rule a string must pass: a Django validator for the serializer, and a plain test with
    its message for the fast check."""

    test: Callable[[str], object]
    message: str

    def __call__(self, value: str) -> None:
        if not self.test(value):
            raise ValidationError(self.message)


def _fast(validator: Validator) -> Check:
    """A validator as a test and a message, so the fast check neither raises nor goes through
    the lazily compiled pattern of a RegexValidator (whose pattern the schema shows)."""
    if isinstance(validator, Check):
        return validator
    if isinstance(validator, RegexValidator) and not validator.inverse_match:
        regex = re.compile(validator.regex.pattern, validator.regex.flags)
        return Check(regex.search, str(validator.message))
    raise TypeError(f"no fast form of the validator {validator!r}")


@dataclass(frozen=True, slots=True)
class Text:
    """A JSON string of 1..max_length characters that passes each validator (a Check, or a
    RegexValidator, which the schema shows as the field's pattern)."""

    max_length: int
    required: bool = True
    validators: Sequence[Validator] = ()
    _checks: tuple[Check, ...] = field(init=False, repr=False, compare=False)

    NOT_A_STRING = StrictCharField.default_error_messages["invalid"]
    BLANK = "This field may not be blank."

    def __post_init__(self) -> None:
        object.__setattr__(self, "_checks", tuple(_fast(v) for v in self.validators))

    def too_long(self) -> str:
        return f"Ensure this field has no more than {self.max_length} characters."

    def parse(self, value: Any) -> str:
        if not isinstance(value, str):
            raise FieldRefused(self.NOT_A_STRING)
        if not value:
            raise FieldRefused(self.BLANK)
        if len(value) > self.max_length:
            raise FieldRefused(self.too_long())
        for check in self._checks:
            if not check.test(value):
                raise FieldRefused(check.message)
        if not value.isascii() and (surrogate := _surrogate.search(value)):
            raise FieldRefused(str(_surrogate_refused).format(code_point=ord(surrogate.group())))
        return value

    def serializer_field(self) -> serializers.Field:
        return StrictCharField(
            required=self.required,
            min_length=1,
            max_length=self.max_length,
            trim_whitespace=False,
            validators=list(self.validators),
            error_messages={
                "required": REQUIRED,
                "invalid": self.NOT_A_STRING,
                "null": self.NOT_A_STRING,
                "blank": self.BLANK,
                "max_length": self.too_long(),
            },
        )


@dataclass(frozen=True, slots=True)
class Integer:
    """A JSON integer (not a boolean, float or string) from low to high."""

    low: int
    high: int
    required: bool = True

    NOT_AN_INTEGER = StrictIntegerField.default_error_messages["invalid"]

    def out_of_range(self) -> str:
        return f"Must be from {self.low} to {self.high}."

    def parse(self, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise FieldRefused(self.NOT_AN_INTEGER)
        if not self.low <= value <= self.high:
            raise FieldRefused(self.out_of_range())
        return value

    def serializer_field(self) -> serializers.Field:
        return StrictIntegerField(
            required=self.required,
            min_value=self.low,
            max_value=self.high,
            error_messages={
                "required": REQUIRED,
                "invalid": self.NOT_AN_INTEGER,
                "null": self.NOT_AN_INTEGER,
                "min_value": self.out_of_range(),
                "max_value": self.out_of_range(),
            },
        )


@dataclass(frozen=True, slots=True)
class Instant:
    """An ISO 8601 date and time; one without an offset is taken as UTC."""

    required: bool = True

    INVALID = "Use ISO 8601, e.g. 2026-11-30T12:00:00Z."

    def parse(self, value: Any) -> datetime:
        try:
            parsed = parse_datetime(value) if isinstance(value, str) else None
        except ValueError:
            parsed = None
        if parsed is None:
            raise FieldRefused(self.INVALID)
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)

    def serializer_field(self) -> serializers.Field:
        return serializers.DateTimeField(
            required=self.required,
            default_timezone=UTC,
            help_text="ISO 8601; a time without an offset is taken as UTC.",
            error_messages={"required": REQUIRED, "invalid": self.INVALID, "null": self.INVALID},
        )


FieldRule = Text | Integer | Instant
_MISSING = object()


class BodyRules:
    """A JSON object's fields in order: `parse` checks one object fast, `serializer` is the
    same rules as a DRF serializer, for the schema (and for any caller off the hot path)."""

    def __init__(self, fields: dict[str, FieldRule]) -> None:
        self.fields = fields
        self._names = frozenset(fields)
        self._checks = tuple((name, rule.parse, rule.required) for name, rule in fields.items())

    def parse(self, data: Any) -> tuple[dict[str, Any] | None, dict[str, list[str]] | None]:
        """The object's values (None for an optional field not given) and no errors, or no
        values and each field's errors, as the serializer's `errors` would say them."""
        if not isinstance(data, dict):
            return None, {"non_field_errors": [NOT_AN_OBJECT]}
        errors: dict[str, list[str]] = {}
        if not data.keys() <= self._names:
            errors = {name: [UNKNOWN_FIELD] for name in sorted(data.keys() - self._names)}
        values: dict[str, Any] = {}
        for name, parse, required in self._checks:
            value = data.get(name, _MISSING)
            if value is _MISSING:
                if required:
                    errors[name] = [REQUIRED]
                values[name] = None
                continue
            try:
                values[name] = parse(value)
            except FieldRefused as exc:
                errors[name] = [str(exc)]
        if errors:
            return None, errors
        return values, None

    def serializer(self, name: str, doc: str) -> type[StrictSerializer]:
        """A StrictSerializer class called `name` with these fields (its schema component)."""
        declared = {name: rule.serializer_field() for name, rule in self.fields.items()}
        return type(name, (StrictSerializer,), {"__doc__": doc, **declared})


class Batch(serializers.Serializer):
    """A JSON array of 1 to `max_items` of `item`, as the schema describes it (subclass and set
    both). For the schema only: the view checks the array and each item itself."""

    item: type[serializers.Serializer]
    max_items: int


class BatchSchema(OpenApiSerializerExtension):
    """drf-spectacular's description of a Batch: an array with its bounds (a ListSerializer in
    a oneOf is described without them)."""

    target_class = Batch
    match_subclasses = True

    def map_serializer(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        item = auto_schema.resolve_serializer(self.target.item, direction)
        return {
            "type": "array",
            "items": item.ref,
            "minItems": 1,
            "maxItems": self.target.max_items,
        }
