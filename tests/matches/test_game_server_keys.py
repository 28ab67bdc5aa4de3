"""Game-server keys as operators manage them, each change audited once: created by the command
line (as `system`) or the admin, their boards changed, revoked, deleted."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from audit.models import OperatorAction
from matches.models import GameServer
from tests.factories import BoardFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator(client):
    client.force_login(User.objects.create_superuser("operator", "op@example.com", "pw"))
    return client


def logged() -> list[tuple]:
    return list(
        OperatorAction.objects.order_by("id").values_list("actor_name", "action", "details")
    )


def test_a_key_created_by_the_command_line_is_audited_as_system(capsys):
    call_command("create_game_server", "eu-west-1")

    server = GameServer.objects.get()
    assert capsys.readouterr().out.splitlines()[-1].startswith(f"{server.prefix}.")
    assert logged() == [
        (
            "system",
            "game_server_key",
            {
                "change": "created",
                "key": "eu-west-1",
                "prefix": server.prefix,
                "boards": [],
                "expiry_date": None,
                "revoked": False,
            },
        )
    ]


def test_a_keys_life_in_the_admin_is_audited_once_per_change(operator):
    arena = BoardFactory(slug="arena")
    BoardFactory(slug="weekly")
    form = {"name": "eu-west-1", "expiry_date_0": "", "expiry_date_1": "", "boards": []}

    created = operator.post("/admin/matches/gameserver/add/", form)
    server = GameServer.objects.get()
    url = f"/admin/matches/gameserver/{server.pk}/change/"
    unchanged = operator.post(url, form)
    scoped = operator.post(url, {**form, "boards": [arena.pk]})
    revoked = operator.post(url, {**form, "boards": [arena.pk], "revoked": "on"})
    deleted = operator.post(f"/admin/matches/gameserver/{server.pk}/delete/", {"post": "yes"})

    assert [p.status_code for p in (created, unchanged, scoped, revoked, deleted)] == [302] * 5
    key = {"key": "eu-west-1", "prefix": server.prefix}
    assert logged() == [
        (
            "operator",
            "game_server_key",
            {
                "change": "created",
                **key,
                "boards": [],
                "expiry_date": None,
                "revoked": False,
            },
        ),
        (
            "operator",
            "game_server_key",
            {"change": "changed", **key, "boards": {"from": [], "to": ["arena"]}},
        ),
        (
            "operator",
            "game_server_key",
            {"change": "revoked", **key, "revoked": {"from": False, "to": True}},
        ),
        ("operator", "game_server_key", {"change": "deleted", **key}),
    ]
