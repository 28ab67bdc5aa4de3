"""SQL conditions Django's lookups cannot write, for check constraints on PostgreSQL arrays.

Migrations name these classes, so they keep their names and module."""

from django.db import models
from django.db.models import Func


class NotAmong(Func):
    """`value <> ALL (array)`: the value is none of the array's elements (true when empty)."""

    template = "(%(expressions)s))"
    arg_joiner = " <> ALL ("
    output_field = models.BooleanField()


class EachMatches(Func):
    """Every element of a text array (a column) matches the regular expression `pattern`, a
    constant of the code (never input), which must not accept a comma: the elements are
    matched joined by commas, and an element holding one would split into more elements."""

    template = (
        "(array_to_string(%(expressions)s, ',') ~ '%(pattern)s' AND cardinality("
        "string_to_array(array_to_string(%(expressions)s, ','), ',')) = cardinality("
        "%(expressions)s))"
    )
    output_field = models.BooleanField()


class AllAbove(Func):
    """`value < ALL (array)`: every element of the array is above the value (true when empty)."""

    template = "(%(expressions)s))"
    arg_joiner = " < ALL ("
    output_field = models.BooleanField()
