"""The webhooks' writes: an event and its deliveries, written in the transaction of the change
they tell of (the outbox: a change that rolls back tells nobody, one that commits is delivered
at least once), endpoints registered, deliveries asked for again and test pings."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import timedelta
from itertools import islice
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from config.building_blocks.errors import InvalidInput
from seasons.models import Board

from . import tasks
from .models import (
    SUBSCRIBABLE_TYPES,
    DeliveryStatus,
    EventType,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
)
from .selectors import endpoints_wanting

# Events written per INSERT when a change emits many (the rewards of a close, in pages).
EVENTS_PER_INSERT = 50


def _deliveries_owed(
    events: Sequence[WebhookEvent], endpoint_ids: Sequence[int]
) -> list[WebhookDelivery]:
    now = timezone.now()
    give_up_at = now + timedelta(seconds=settings.WEBHOOK_GIVE_UP_SECONDS)
    return WebhookDelivery.objects.bulk_create(
        [
            WebhookDelivery(
                event=event,
                endpoint_id=endpoint_id,
                created_at=now,
                next_attempt_at=now,
                give_up_at=give_up_at,
            )
            for event in events
            for endpoint_id in endpoint_ids
        ]
    )


def _deliver_on_commit(endpoint_ids: Sequence[int]) -> None:
    """The POSTs start once the change is committed (never before: a receiver must not hear of
    a change that could still roll back). This is only a hint: the sweep finds every delivery
    that is due, so a hint lost with its process or its broker loses nothing."""
    chosen = sorted(set(endpoint_ids))
    transaction.on_commit(lambda: tasks.deliveries_queue(endpoint_ids=chosen))


def webhook_events_emit(
    *, event_type: str, data_pages: Iterable[dict[str, Any]], board: Board | None = None
) -> int:
    """One event per `data_pages` item, each with a delivery to every endpoint that wants it,
    in the caller's transaction; returns how many events. The data must be JSON as it is (ids,
    slugs, ISO times): it is sent as written. With no endpoint wanting the type nothing is
    written and `data_pages` is never read: a close of a board of millions does not page its
    rewards for nobody."""
    event_type = str(event_type)
    if event_type not in SUBSCRIBABLE_TYPES:
        raise ValueError(f"Unknown webhook event type: {event_type!r}")
    now = timezone.now()
    pages = iter(data_pages)
    written = 0
    with transaction.atomic():
        endpoint_ids = list(
            endpoints_wanting(event_type, None if board is None else board.pk).values_list(
                "pk", flat=True
            )
        )
        if not endpoint_ids:
            return 0
        while chunk := list(islice(pages, EVENTS_PER_INSERT)):
            events = WebhookEvent.objects.bulk_create(
                [
                    WebhookEvent(type=event_type, created_at=now, board=board, data=data)
                    for data in chunk
                ]
            )
            _deliveries_owed(events, endpoint_ids)
            written += len(events)
        if written:
            _deliver_on_commit(endpoint_ids)
    return written


def webhook_event_emit(
    *, event_type: str, data: dict[str, Any], board: Board | None = None
) -> None:
    """One event (see webhook_events_emit), in the caller's transaction."""
    webhook_events_emit(event_type=event_type, data_pages=[data], board=board)


def webhook_endpoint_create(
    *,
    url: str,
    secret: str,
    event_types: Sequence[str] = (),
    board_slugs: Sequence[str] = (),
) -> WebhookEndpoint:
    """Register an endpoint (empty `event_types`: every type; no boards: every board). Raises
    InvalidInput, writing nothing, for an unknown event type or board, or a URL that may not
    receive webhooks (addresses.py)."""
    unknown = sorted(set(event_types) - set(SUBSCRIBABLE_TYPES))
    if unknown:
        raise InvalidInput(
            f"Unknown event type(s): {', '.join(unknown)}. Known: {', '.join(SUBSCRIBABLE_TYPES)}.",
            code="unknown_event_type",
        )
    boards = list(Board.objects.filter(slug__in=board_slugs))
    missing = sorted(set(board_slugs) - {board.slug for board in boards})
    if missing:
        raise InvalidInput(f"No board: {', '.join(missing)}.", code="unknown_board")
    endpoint = WebhookEndpoint(url=url, secret=secret, event_types=list(dict.fromkeys(event_types)))
    try:
        endpoint.full_clean()
    except ValidationError as exc:
        messages = [f"{field}: {' '.join(errors)}" for field, errors in exc.message_dict.items()]
        raise InvalidInput(" ".join(messages), code="invalid_endpoint") from exc
    with transaction.atomic():
        endpoint.save()
        endpoint.boards.set(boards)
    return endpoint


def webhook_deliveries_redeliver(*, delivery_ids: Sequence[int]) -> int:
    """Send these deliveries again, from now, whatever came of them (delivered ones too: the
    receiver sees the same event id again); one being posted right now is left to finish.
    Attempts count from zero again, and the give-up time is a full WEBHOOK_GIVE_UP_SECONDS
    away. Returns how many were queued."""
    now = timezone.now()
    with transaction.atomic():
        chosen = (
            WebhookDelivery.objects.select_for_update()
            .filter(pk__in=delivery_ids)
            .exclude(status=DeliveryStatus.DELIVERING, locked_until__gt=now)
        )
        rows = list(chosen.values_list("pk", "endpoint_id"))
        queued = WebhookDelivery.objects.filter(pk__in=[pk for pk, _ in rows]).update(
            status=DeliveryStatus.PENDING,
            attempts=0,
            next_attempt_at=now,
            give_up_at=now + timedelta(seconds=settings.WEBHOOK_GIVE_UP_SECONDS),
            delivered_at=None,
            locked_until=None,
        )
        if queued:
            _deliver_on_commit([endpoint_id for _, endpoint_id in rows])
    return queued


def webhook_ping(*, endpoint: WebhookEndpoint) -> WebhookEvent:
    """A `ping` event to this endpoint alone (whatever types it takes), to check that it
    receives and verifies webhooks."""
    now = timezone.now()
    with transaction.atomic():
        event = WebhookEvent.objects.create(
            type=EventType.PING,
            created_at=now,
            data={"endpoint_id": endpoint.pk, "message": "A test ping from the leaderboard."},
        )
        _deliveries_owed([event], [endpoint.pk])
        _deliver_on_commit([endpoint.pk])
    return event
