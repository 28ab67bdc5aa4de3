"""The webhooks' admin: the secret is write-only; deliveries are read-only rows with the
actions Redeliver (the change permission on deliveries) and Send a test ping (the change
permission on endpoints): a view-only account is offered neither and a forged POST changes
nothing; an account with the permission runs them."""

from __future__ import annotations

import json

import pytest

from tests.staff import staff
from webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from webhooks.services import webhook_event_emit

pytestmark = pytest.mark.django_db


def offered(client, url: str) -> list[str]:
    form = client.get(url).context["action_form"]
    return [] if form is None else [name for name, _ in form.fields["action"].choices if name]


@pytest.fixture
def failed(endpoint, receiver, django_capture_on_commit_callbacks) -> WebhookDelivery:
    """A delivery given up on (its receiver answered 500)."""
    receiver.status = 500
    with django_capture_on_commit_callbacks(execute=True):
        webhook_event_emit(event_type="player.banned", data={"player_id": "p1"})
    WebhookDelivery.objects.update(status="failed")
    receiver.status = 200
    receiver.received.clear()
    return WebhookDelivery.objects.get()


def deliveries_now() -> list[tuple]:
    return list(
        WebhookDelivery.objects.order_by("pk").values_list(
            "pk", "event_id", "status", "attempts", "next_attempt_at", "give_up_at"
        )
    )


def test_a_view_only_account_is_offered_no_action_and_a_forged_one_changes_nothing(
    client, failed, endpoint, receiver, django_capture_on_commit_callbacks
):
    looker = staff(client, "support", every_view=True)
    before = deliveries_now()

    with django_capture_on_commit_callbacks(execute=True) as queued:
        for action in ("redeliver", "send_test_ping"):
            looker.post(
                "/admin/webhooks/webhookdelivery/",
                {"action": action, "_selected_action": [failed.pk]},
            )
        looker.post(
            "/admin/webhooks/webhookendpoint/",
            {"action": "send_test_ping", "_selected_action": [endpoint.pk]},
        )

    assert offered(looker, "/admin/webhooks/webhookdelivery/") == []
    assert offered(looker, "/admin/webhooks/webhookendpoint/") == []
    assert queued == []
    assert deliveries_now() == before
    assert WebhookEvent.objects.count() == 1
    assert receiver.received == []


def test_the_change_permission_on_deliveries_redelivers(
    client, failed, receiver, django_capture_on_commit_callbacks
):
    operator = staff(client, "operator", "view_webhookdelivery", "change_webhookdelivery")

    with django_capture_on_commit_callbacks(execute=True):
        operator.post(
            "/admin/webhooks/webhookdelivery/",
            {"action": "redeliver", "_selected_action": [failed.pk]},
        )

    assert offered(operator, "/admin/webhooks/webhookdelivery/") == ["redeliver"]
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("delivered", 1, 200)
    assert receiver.event_ids() == [str(failed.event_id)]


def test_the_change_permission_on_endpoints_sends_a_test_ping(
    client, endpoint, receiver, django_capture_on_commit_callbacks
):
    operator = staff(
        client, "operator", "view_webhookendpoint", "change_webhookendpoint", "view_webhookdelivery"
    )

    with django_capture_on_commit_callbacks(execute=True):
        operator.post(
            "/admin/webhooks/webhookendpoint/",
            {"action": "send_test_ping", "_selected_action": [endpoint.pk]},
        )

    assert offered(operator, "/admin/webhooks/webhookendpoint/") == ["send_test_ping"]
    assert offered(operator, "/admin/webhooks/webhookdelivery/") == ["send_test_ping"]
    (ping,) = [json.loads(post.body) for post in receiver.received]
    assert (ping["type"], ping["data"]["endpoint_id"]) == ("ping", endpoint.pk)
    assert WebhookDelivery.objects.get().status == "delivered"


def test_the_secret_is_never_shown_and_kept_when_left_empty(client, endpoint):
    operator = staff(client, "operator", "view_webhookendpoint", "change_webhookendpoint")
    page = operator.get(f"/admin/webhooks/webhookendpoint/{endpoint.pk}/change/")
    listed = operator.get("/admin/webhooks/webhookendpoint/")

    saved = operator.post(
        f"/admin/webhooks/webhookendpoint/{endpoint.pk}/change/",
        {
            "url": endpoint.url,
            "secret": "",
            "event_types": ["player.banned"],
            "active": "on",
            "timeout_seconds": 5,
            "concurrency": 2,
        },
    )

    assert endpoint.secret not in page.content.decode()
    assert endpoint.secret not in listed.content.decode()
    assert saved.status_code == 302
    changed = WebhookEndpoint.objects.get()
    assert (changed.secret, changed.event_types, changed.timeout_seconds) == (
        endpoint.secret,
        ["player.banned"],
        5,
    )


def test_delivery_rows_are_read_only_even_for_a_superuser(admin_client, failed):
    page = admin_client.get(f"/admin/webhooks/webhookdelivery/{failed.pk}/change/")

    assert page.status_code == 200
    assert page.context["has_change_permission"] is False
    assert "500" in page.content.decode()
