"""Reads of the webhooks' endpoints: which ones want an event, and whether any does (asked on
the mirror's path, so answered from memory for a few seconds)."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Exists, OuterRef, Q, QuerySet

from config.building_blocks.caching import RecentAnswers

from .models import WebhookEndpoint


def endpoints_wanting(event_type: str, board_id: int | None) -> QuerySet[WebhookEndpoint]:
    """The active endpoints that take this type (none listed: every type) and, for an event of
    a board, that board (none listed: every board). An event of no board goes to them all."""
    endpoints = WebhookEndpoint.objects.filter(active=True).filter(
        Q(event_types=[]) | Q(event_types__contains=[event_type])
    )
    if board_id is None:
        return endpoints
    chosen = WebhookEndpoint.boards.through.objects.filter(webhookendpoint_id=OuterRef("pk"))
    return endpoints.filter(~Exists(chosen) | Exists(chosen.filter(board_id=board_id)))


_wanted: RecentAnswers[bool] = RecentAnswers(
    seconds=lambda: settings.WEBHOOK_WANTED_CACHE_SECONDS, maxsize=lambda: 10_000
)


def webhook_wanted(*, event_type: str, board_id: int) -> bool:
    """Whether an active endpoint wants this type of event of this board; an endpoint added or
    changed is seen within WEBHOOK_WANTED_CACHE_SECONDS. For events computed only for someone
    (threshold crossings): a write that emits an event regardless asks webhook_events_emit."""
    return _wanted.get_or_build(
        (event_type, board_id), lambda: endpoints_wanting(event_type, board_id).exists()
    )
