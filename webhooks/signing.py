"""What one POST of an event carries: the JSON body, the same bytes on every attempt, and the
headers that sign it (HMAC-SHA256 of "<unix seconds>.<body>" with the endpoint's secret, as
docs/webhooks.md shows receivers how to check)."""

from __future__ import annotations

import hashlib
import hmac
import json

from .models import WebhookEvent

SIGNATURE_HEADER = "Leaderboard-Signature"
EVENT_ID_HEADER = "Leaderboard-Event-Id"


def event_body(event: WebhookEvent) -> bytes:
    """The event as its POSTs send it; keys sorted, so every attempt sends the same bytes."""
    return json.dumps(
        {
            "id": str(event.id),
            "type": event.type,
            "created_at": event.created_at.isoformat(),
            "data": event.data,
        },
        separators=(",", ":"),
        sort_keys=True,
    ).encode()


def signature(*, secret: str, body: bytes, timestamp: int) -> str:
    """The `Leaderboard-Signature` header's value for this body sent at `timestamp`."""
    signed = f"{timestamp}.".encode() + body
    digest = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"
