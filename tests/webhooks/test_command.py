"""`manage.py webhook_add`: registers an endpoint and prints its id; an unknown event type or
board, or a URL that may not receive webhooks, is a clear error and writes nothing."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from tests.factories import BoardFactory
from webhooks.models import WebhookEndpoint

pytestmark = pytest.mark.django_db


def test_webhook_add_registers_an_endpoint_and_prints_its_id(capsys):
    BoardFactory(slug="global")
    BoardFactory(slug="ranked")

    call_command(
        "webhook_add",
        "--url",
        "http://127.0.0.1:9000/hooks",
        "--secret",
        "whsec-1",
        "--events",
        "season.closed, rewards.granted",
        "--boards",
        "global,ranked",
    )

    printed = capsys.readouterr().out.strip()
    endpoint = WebhookEndpoint.objects.get()
    assert printed == str(endpoint.pk)
    assert (endpoint.url, endpoint.secret, endpoint.event_types) == (
        "http://127.0.0.1:9000/hooks",
        "whsec-1",
        ["season.closed", "rewards.granted"],
    )
    assert sorted(endpoint.boards.values_list("slug", flat=True)) == ["global", "ranked"]
    assert (endpoint.active, endpoint.timeout_seconds, endpoint.concurrency) == (True, 10, 4)


def test_webhook_add_without_events_or_boards_takes_every_one(capsys):
    call_command("webhook_add", "--url", "https://hooks.example.com/in", "--secret", "s")

    endpoint = WebhookEndpoint.objects.get()
    assert (endpoint.event_types, list(endpoint.boards.all())) == ([], [])


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            ["--events", "season.closed,season.opened"],
            "Unknown event type(s): season.opened. Known: season.closed, rewards.granted, "
            "player.threshold, player.banned, player.unbanned, result.voided, archive.corrected.",
        ),
        (["--events", "ping"], "Unknown event type(s): ping."),
        (["--boards", "global,nowhere"], "No board: nowhere."),
    ],
)
def test_webhook_add_refuses_unknown_events_and_boards_and_writes_nothing(arguments, message):
    BoardFactory(slug="global")

    with pytest.raises(CommandError) as refused:
        call_command(
            "webhook_add", "--url", "http://127.0.0.1:9000/hooks", "--secret", "s", *arguments
        )

    assert str(refused.value).startswith(message)
    assert not WebhookEndpoint.objects.exists()


def test_webhook_add_refuses_a_private_url_without_the_setting(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False

    with pytest.raises(CommandError, match="a loopback address"):
        call_command("webhook_add", "--url", "http://127.0.0.1:9000/hooks", "--secret", "s")

    assert not WebhookEndpoint.objects.exists()


def test_webhook_add_refuses_a_url_that_is_not_http():
    with pytest.raises(CommandError, match="url"):
        call_command("webhook_add", "--url", "ftp://files.example.com/x", "--secret", "s")

    assert not WebhookEndpoint.objects.exists()
