"""The webhooks' history is kept WEBHOOK_KEEP_DAYS: older events go with their deliveries, but
never one still on its way to an endpoint."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.factories import WebhookEndpointFactory
from webhooks.history import webhook_history_prune
from webhooks.models import DeliveryStatus, WebhookDelivery, WebhookEvent

pytestmark = pytest.mark.django_db


def _event(age: timedelta, *statuses: str) -> WebhookEvent:
    created = timezone.now() - age
    event = WebhookEvent.objects.create(type="player.banned", created_at=created, data={})
    for status in statuses:
        WebhookDelivery.objects.create(
            event=event,
            endpoint=WebhookEndpointFactory(),
            status=status,
            created_at=created,
            next_attempt_at=created,
            give_up_at=created + timedelta(days=1),
            delivered_at=created if status == DeliveryStatus.DELIVERED else None,
            locked_until=timezone.now() if status == DeliveryStatus.DELIVERING else None,
        )
    return event


def test_old_finished_events_go_with_their_deliveries_the_rest_stay(settings):
    settings.WEBHOOK_KEEP_DAYS = 7
    old_done = _event(timedelta(days=8), DeliveryStatus.DELIVERED, DeliveryStatus.FAILED)
    old_unsent = _event(timedelta(days=8), DeliveryStatus.DELIVERED, DeliveryStatus.PENDING)
    old_sending = _event(timedelta(days=9), DeliveryStatus.DELIVERING)
    recent = _event(timedelta(days=6), DeliveryStatus.DELIVERED)

    assert webhook_history_prune() == 1

    assert set(WebhookEvent.objects.values_list("pk", flat=True)) == {
        old_unsent.pk,
        old_sending.pk,
        recent.pk,
    }
    assert not WebhookDelivery.objects.filter(event_id=old_done.pk).exists()
    assert WebhookDelivery.objects.count() == 4
    # A second run finds nothing more to do.
    assert webhook_history_prune() == 0
