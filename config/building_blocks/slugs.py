"""The slug rule of boards and seasons: the models' validator, the API's checks and the OpenAPI
patterns are all built from the constants here (config, the lowest layer, so every app reads
the same rule)."""

from __future__ import annotations

import re

from django.core.validators import RegexValidator

SLUG_MAX_LENGTH = 64
SLUG_CHARACTERS = rf"[a-z0-9][a-z0-9_-]{{0,{SLUG_MAX_LENGTH - 1}}}"
SLUG_RULE = (
    f"1-{SLUG_MAX_LENGTH} lowercase letters, digits, '-' or '_', starting with a letter or digit"
)
SLUG_PATTERN = rf"^{SLUG_CHARACTERS}$"
# In query strings an empty value means "not given", as in an HTML form.
OPTIONAL_SLUG_PATTERN = rf"^({SLUG_CHARACTERS})?$"
_slug_regex = re.compile(SLUG_PATTERN)

# The models' validator; its regex and message are written into the migrations, so changing
# either is a schema change.
slug_validator = RegexValidator(SLUG_PATTERN, f"Use {SLUG_RULE}.")


def slug_allowed(value: str) -> bool:
    return _slug_regex.match(value) is not None
