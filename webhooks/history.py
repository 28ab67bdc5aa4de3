"""The webhooks' history kept for the admin: old events and their finished deliveries go."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from .models import DeliveryStatus, WebhookDelivery, WebhookEvent

# Events one call deletes at most.
PRUNE_BATCH = 5000


def webhook_history_prune(*, now: datetime | None = None) -> int:
    """Delete events older than WEBHOOK_KEEP_DAYS with their deliveries, once none of those is
    still on its way (pending or being delivered); at most PRUNE_BATCH events a call, so the
    hourly task never holds a long lock. Returns how many events went."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.WEBHOOK_KEEP_DAYS)
    unfinished = WebhookDelivery.objects.filter(
        event=OuterRef("pk"), status__in=[DeliveryStatus.PENDING, DeliveryStatus.DELIVERING]
    )
    old = (
        WebhookEvent.objects.filter(created_at__lt=cutoff)
        .exclude(Exists(unfinished))
        .order_by("created_at")
        .values_list("pk", flat=True)[:PRUNE_BATCH]
    )
    with transaction.atomic():
        ids = list(old)
        WebhookDelivery.objects.filter(event_id__in=ids).delete()
        deleted, _ = WebhookEvent.objects.filter(pk__in=ids).delete()
    return deleted
