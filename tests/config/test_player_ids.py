"""The player-id rule: PostgreSQL, the model, the API's fields and the URL check agree."""

import pytest
from django.core.exceptions import ValidationError
from django.db import DataError, IntegrityError, transaction

from config.building_blocks.errors import InvalidInput
from config.building_blocks.player_ids import (
    check_player_id,
    player_id_allowed,
    player_id_field_validator,
    player_id_validator,
)
from matches.models import Player

GOOD = ["p", "Ada_L.9-x", "x" * 64]
BAD = ["", "x" * 65, "a b", "p\n", "\np", "é", "a/b", "a\x00b"]


def _passes(validator, value: str) -> bool:
    try:
        validator(value)
    except ValidationError:
        return False
    return True


@pytest.mark.parametrize(
    ("player_id", "allowed"), [(i, True) for i in GOOD] + [(i, False) for i in BAD]
)
def test_every_python_check_reads_the_same_rule(player_id, allowed):
    assert player_id_allowed(player_id) is allowed
    assert _passes(player_id_validator, player_id) is allowed
    assert _passes(player_id_field_validator, player_id) is allowed
    if allowed:
        check_player_id(player_id)
    else:
        with pytest.raises(InvalidInput) as refused:
            check_player_id(player_id)
        assert refused.value.code == "invalid_player_id"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("player_id", "allowed"),
    [(i, True) for i in GOOD] + [(i, False) for i in BAD if "\x00" not in i],
)
def test_postgresql_checks_the_same_rule(player_id, allowed):
    # given a player id; when it is written straight to the table (no Python validation)
    try:
        with transaction.atomic():
            Player.objects.create(player_id=player_id)
        written = True
    except (DataError, IntegrityError):
        written = False

    # then the database's check constraint decided as Python does
    assert written is allowed
    assert Player.objects.filter(player_id=player_id).exists() is allowed
