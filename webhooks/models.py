"""What the webhooks keep in PostgreSQL: the endpoints operators register, the events the game's
changes emit (the outbox, written in the change's own transaction) and one delivery of each event
to each endpoint that wants it, with its attempts."""

from __future__ import annotations

import uuid

from django.contrib.postgres.fields import ArrayField
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, URLValidator
from django.db import models
from django.db.models import Q

from seasons.models import Board

from .addresses import UrlRefused, url_check

URL_MAX_LENGTH = 2000
TIMEOUT_SECONDS_MAX = 60
CONCURRENCY_MAX = 32


class EventType(models.TextChoices):
    SEASON_CLOSED = "season.closed", "A season closed"
    REWARDS_GRANTED = "rewards.granted", "Rewards granted (in pages)"
    PLAYER_THRESHOLD = "player.threshold", "A player entered or left a top-N threshold"
    PLAYER_BANNED = "player.banned", "A player was banned"
    PLAYER_UNBANNED = "player.unbanned", "A player was unbanned"
    RESULT_VOIDED = "result.voided", "A result was voided"
    ARCHIVE_CORRECTED = "archive.corrected", "A closed season's archive was corrected"
    # Sent only by an operator's test ping to one endpoint; nobody subscribes to it.
    PING = "ping", "Test ping"


# The types an endpoint may subscribe to: every type but the test ping.
SUBSCRIBABLE_TYPES = [value for value in EventType.values if value != EventType.PING]


class WebhookEndpoint(models.Model):
    """A receiver of events: each POST to `url` is signed with `secret`. Empty `event_types`
    means every type; no `boards` means every board (and an event of no board, such as a ban,
    goes to every endpoint that wants its type)."""

    url = models.URLField(
        max_length=URL_MAX_LENGTH,
        validators=[URLValidator(schemes=["http", "https"])],
        help_text="http or https; its host must not resolve to a private, loopback, link-local, "
        "multicast or reserved address (unless WEBHOOK_ALLOW_PRIVATE_URLS is on).",
    )
    secret = models.CharField(
        max_length=200, help_text="Signs every delivery (HMAC-SHA256); shown nowhere once saved."
    )
    event_types = ArrayField(
        models.CharField(max_length=32, choices=[(t, t) for t in SUBSCRIBABLE_TYPES]),
        default=list,
        blank=True,
        help_text="Empty: every event type.",
    )
    boards = models.ManyToManyField(
        Board, blank=True, related_name="+", help_text="Empty: every board."
    )
    active = models.BooleanField(
        default=True, help_text="Off: no new deliveries; those waiting stay until it is on again."
    )
    timeout_seconds = models.PositiveSmallIntegerField(
        default=10,
        validators=[MinValueValidator(1), MaxValueValidator(TIMEOUT_SECONDS_MAX)],
        help_text="How long one POST may take before it counts as failed.",
    )
    concurrency = models.PositiveSmallIntegerField(
        default=4,
        validators=[MinValueValidator(1), MaxValueValidator(CONCURRENCY_MAX)],
        help_text="Deliveries to this endpoint in flight at once, at most.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # A failing endpoint is paused as a whole (webhooks/delivery.py): its failed attempts in a
    # row, and until when none of its deliveries is tried; then one at a time until one passes.
    failing_attempts = models.PositiveIntegerField(default=0, editable=False)
    paused_until = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(url__regex=r"^https?://"), name="webhook_endpoint_http_url"
            ),
            models.CheckConstraint(condition=~Q(secret=""), name="webhook_endpoint_secret_set"),
            models.CheckConstraint(
                condition=Q(event_types__contained_by=SUBSCRIBABLE_TYPES),
                name="webhook_endpoint_known_event_types",
                violation_error_message="Unknown event type.",
            ),
            models.CheckConstraint(
                condition=Q(timeout_seconds__gte=1, timeout_seconds__lte=TIMEOUT_SECONDS_MAX),
                name="webhook_endpoint_timeout_in_range",
            ),
            models.CheckConstraint(
                condition=Q(concurrency__gte=1, concurrency__lte=CONCURRENCY_MAX),
                name="webhook_endpoint_concurrency_in_range",
            ),
        ]

    def __str__(self) -> str:
        return self.url

    def clean(self) -> None:
        # Checked where the URL is entered (the admin's form, webhook_add); every POST checks
        # again, since what the host resolves to can change.
        if self.url:
            try:
                url_check(self.url)
            except UrlRefused as exc:
                raise ValidationError({"url": str(exc)}) from exc


class WebhookEvent(models.Model):
    """Something receivers are told: its id is the `Leaderboard-Event-Id` of every POST of it,
    so a receiver can drop a repeat."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    type = models.CharField(max_length=32, choices=EventType.choices)
    created_at = models.DateTimeField()
    # Which board the event is about, for the endpoints' board filter; none for a player's ban.
    board = models.ForeignKey(
        Board, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    data = models.JSONField()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(type__in=EventType.values), name="webhook_event_known_type"
            )
        ]
        indexes = [models.Index(fields=["-created_at"], name="webhook_event_newest")]

    def __str__(self) -> str:
        return f"{self.type} {self.id}"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    DELIVERING = "delivering", "Delivering"
    DELIVERED = "delivered", "Delivered"
    FAILED = "failed", "Failed (gave up)"


class WebhookDelivery(models.Model):
    """One event to one endpoint: pending until a POST answers 2xx (delivered) or until it is
    given up on (failed). While a worker posts it, it is `delivering` until `locked_until`; a
    worker lost meanwhile leaves it to be claimed again after that."""

    event = models.ForeignKey(WebhookEvent, on_delete=models.CASCADE, related_name="deliveries")
    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries"
    )
    status = models.CharField(
        max_length=10, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField()
    next_attempt_at = models.DateTimeField()
    # Failed attempts after this make the delivery `failed` (WEBHOOK_GIVE_UP_SECONDS after it
    # was made, or after an operator's redeliver).
    give_up_at = models.DateTimeField()
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    last_answer = models.TextField(blank=True, default="")
    last_error = models.TextField(blank=True, default="")
    delivered_at = models.DateTimeField(null=True, blank=True)
    locked_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "webhook deliveries"
        constraints = [
            models.UniqueConstraint(fields=["event", "endpoint"], name="webhook_delivery_once"),
            models.CheckConstraint(
                condition=Q(status__in=DeliveryStatus.values), name="webhook_delivery_status"
            ),
            models.CheckConstraint(
                condition=Q(status=DeliveryStatus.DELIVERED, delivered_at__isnull=False)
                | (~Q(status=DeliveryStatus.DELIVERED) & Q(delivered_at__isnull=True)),
                name="webhook_delivery_delivered_at_when_delivered",
            ),
            models.CheckConstraint(
                condition=~Q(status=DeliveryStatus.DELIVERING) | Q(locked_until__isnull=False),
                name="webhook_delivery_locked_while_delivering",
            ),
        ]
        indexes = [
            # The claim's scan: the deliveries still owed, per endpoint, soonest first.
            models.Index(
                fields=["endpoint", "next_attempt_at"],
                condition=Q(status__in=[DeliveryStatus.PENDING, DeliveryStatus.DELIVERING]),
                name="webhook_delivery_owed",
            ),
            models.Index(fields=["-created_at"], name="webhook_delivery_newest"),
        ]

    def __str__(self) -> str:
        return f"{self.event_id} to {self.endpoint_id}: {self.status}"
