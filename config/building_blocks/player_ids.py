"""The player-id rule: PostgreSQL's check, the model's validator, the API's checks and the
OpenAPI patterns are all built from the constants here.

It lives in config, the lowest layer, because every app checks player ids (the seasons' reward
pages as well as the write path), and seasons may not import matches.
"""

from __future__ import annotations

import re

from django.core.validators import RegexValidator

from config.building_blocks.errors import InvalidInput

PLAYER_ID_MAX_LENGTH = 64
PLAYER_ID_CHARACTERS = rf"[A-Za-z0-9_.-]{{1,{PLAYER_ID_MAX_LENGTH}}}"
# The rule in words, for error messages and the schema.
PLAYER_ID_RULE = f"1-{PLAYER_ID_MAX_LENGTH} characters of A-Z, a-z, 0-9, '_', '.' or '-'"

# For PostgreSQL and OpenAPI, where "$" is the end of the string. (In Python "$" also matches
# before a final newline, so Python checks with \A...\Z, which accepts exactly the same ids.)
PLAYER_ID_PATTERN = rf"^{PLAYER_ID_CHARACTERS}$"
# In query strings an empty value means "not given", as in an HTML form.
OPTIONAL_PLAYER_ID_PATTERN = rf"^({PLAYER_ID_CHARACTERS})?$"
_PYTHON_PATTERN = rf"\A{PLAYER_ID_CHARACTERS}\Z"
_player_id_regex = re.compile(_PYTHON_PATTERN)

# The model's validator; its regex and message are written into the migrations, so changing
# either is a schema change.
player_id_validator = RegexValidator(_PYTHON_PATTERN, f"A player id is {PLAYER_ID_RULE}.")
# The same rule for the API's input fields, in the API's wording.
player_id_field_validator = RegexValidator(_PYTHON_PATTERN, f"Use {PLAYER_ID_RULE}.")


def player_id_allowed(value: str) -> bool:
    return _player_id_regex.match(value) is not None


def check_player_id(player_id: str) -> None:
    """A player id from a URL: a bad one is a 400 `invalid_player_id`."""
    if not player_id_allowed(player_id):
        raise InvalidInput(player_id_validator.message, code="invalid_player_id")
