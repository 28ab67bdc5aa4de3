"""The rules of segments and clans: a board's segment dimensions (`country`, `platform`), a
player's value in each (`DE`, `pc`) and clan ids. Boards (seasons) declare the dimensions and
players (matches) carry the values, so the rules live here, below both; the models' checks, the
API's and the admin's are built from these constants."""

from __future__ import annotations

import re

from django.core.validators import RegexValidator

# Dimensions one board may declare: every write of the board writes one set per dimension.
MAX_DIMENSIONS = 4
# The segment of a clan's members on every board: no board's dimension may be named so.
CLAN_DIMENSION = "clan"
DIMENSION_CHARACTERS = r"[a-z][a-z0-9_]{0,31}"
DIMENSION_RULE = "1-32 lowercase letters, digits or '_', starting with a letter"
dimension_validator = RegexValidator(rf"\A{DIMENSION_CHARACTERS}\Z", f"Use {DIMENSION_RULE}.")

SEGMENT_VALUE_CHARACTERS = r"[A-Za-z0-9_.-]{1,32}"
SEGMENT_VALUE_RULE = "1-32 characters of A-Z, a-z, 0-9, '_', '.' or '-'"
segment_value_validator = RegexValidator(
    rf"\A{SEGMENT_VALUE_CHARACTERS}\Z", f"Use {SEGMENT_VALUE_RULE}."
)

CLAN_ID_CHARACTERS = r"[A-Za-z0-9_.-]{1,64}"
CLAN_ID_RULE = "1-64 characters of A-Z, a-z, 0-9, '_', '.' or '-'"
CLAN_ID_PATTERN = rf"^{CLAN_ID_CHARACTERS}$"
# Ids no clan may take: the clan board's own addresses (/api/v1/leaderboard/clans/top).
RESERVED_CLAN_IDS = frozenset({"top"})
clan_id_validator = RegexValidator(rf"\A{CLAN_ID_CHARACTERS}\Z", f"Use {CLAN_ID_RULE}.")
_clan_id_regex = re.compile(rf"\A{CLAN_ID_CHARACTERS}\Z")


def clan_id_allowed(value: str) -> bool:
    return _clan_id_regex.match(value) is not None
