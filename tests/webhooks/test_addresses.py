"""Webhooks go to public http(s) addresses only: a URL whose host resolves to a private,
loopback, link-local, multicast or reserved address is refused when it is registered (the
service, the command, the admin's form) and again before each POST, unless
WEBHOOK_ALLOW_PRIVATE_URLS allows it (local development and these tests)."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User

from config.building_blocks.errors import InvalidInput
from tests.factories import WebhookEndpointFactory
from webhooks.delivery import deliveries_send_due
from webhooks.models import WebhookDelivery, WebhookEndpoint
from webhooks.services import webhook_endpoint_create, webhook_event_emit

pytestmark = pytest.mark.django_db

REFUSED = {
    "http://127.0.0.1:8000/hooks": "loopback",
    "http://localhost/hooks": "loopback",
    "http://[::1]/hooks": "loopback",
    "http://10.1.2.3/hooks": "private",
    "https://192.168.0.10/hooks": "private",
    "http://169.254.169.254/latest/meta-data": "link-local",
    "http://224.0.0.251/hooks": "multicast",
    "http://240.0.0.1/hooks": "reserved",
    "http://0.0.0.0/hooks": "unspecified",
    "http://[::ffff:127.0.0.1]/hooks": "loopback",
}


@pytest.fixture
def guarded(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False


@pytest.mark.parametrize(("url", "kind"), REFUSED.items())
def test_a_url_resolving_to_a_private_address_is_refused_at_registration(guarded, url, kind):
    with pytest.raises(InvalidInput) as refused:
        webhook_endpoint_create(url=url, secret="s")

    assert f"a {kind} address" in refused.value.message
    assert "WEBHOOK_ALLOW_PRIVATE_URLS is off" in refused.value.message
    assert not WebhookEndpoint.objects.exists()


def test_a_public_address_is_taken(guarded):
    endpoint = webhook_endpoint_create(url="https://93.184.215.14/hooks", secret="s")

    assert WebhookEndpoint.objects.get().url == endpoint.url


@pytest.mark.parametrize(
    "url", ["ftp://93.184.215.14/hooks", "file:///etc/passwd", "gopher://x/", "http://u:p@1.1.1.1/"]
)
def test_only_http_and_https_urls_are_taken_whatever_the_setting(url):
    with pytest.raises(InvalidInput):
        webhook_endpoint_create(url=url, secret="s")

    assert not WebhookEndpoint.objects.exists()


def test_the_setting_lets_local_development_register_a_loopback_url():
    webhook_endpoint_create(url="http://127.0.0.1:8000/hooks", secret="s")

    assert WebhookEndpoint.objects.count() == 1


def test_a_private_address_is_refused_at_delivery_too(
    endpoint, receiver, settings, django_capture_on_commit_callbacks
):
    # given: an endpoint registered while allowed (or whose host now resolves elsewhere)
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False

    # when
    with django_capture_on_commit_callbacks(execute=True):
        webhook_event_emit(event_type="player.banned", data={"player_id": "p1"})

    # then: a failed attempt, nothing sent
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("pending", 1, None)
    assert delivery.last_error == (
        "refused: The host 127.0.0.1 resolves to 127.0.0.1, a loopback address: webhooks go to "
        "public addresses only (WEBHOOK_ALLOW_PRIVATE_URLS is off)."
    )
    assert receiver.received == []

    # and: allowed again, the retry is delivered
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    deliveries_send_due(now=delivery.next_attempt_at)
    assert WebhookDelivery.objects.get().status == "delivered"
    assert [json.loads(post.body)["type"] for post in receiver.received] == ["player.banned"]


def test_the_admins_form_refuses_a_private_url(guarded, client):
    client.force_login(User.objects.create_superuser("operator", "op@example.com", "pw"))

    page = client.post(
        "/admin/webhooks/webhookendpoint/add/",
        {
            "url": "http://127.0.0.1:9000/hooks",
            "secret": "s",
            "timeout_seconds": 10,
            "concurrency": 4,
        },
    )

    assert page.status_code == 200
    assert "a loopback address" in str(page.context["adminform"].form.errors["url"])
    assert not WebhookEndpoint.objects.exists()


def test_a_host_name_is_posted_to_an_address_it_resolved_to_under_its_own_name(
    receiver, django_capture_on_commit_callbacks
):
    WebhookEndpointFactory(url=f"http://localhost:{receiver.port}/hooks")

    with django_capture_on_commit_callbacks(execute=True):
        webhook_event_emit(event_type="player.banned", data={"player_id": "p1"})

    (post,) = receiver.received
    assert post.headers["Host"] == f"localhost:{receiver.port}"
    assert WebhookDelivery.objects.get().status == "delivered"
