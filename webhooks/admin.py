"""Admin for webhooks: endpoints (registered and changed here; the secret is write-only), the
events told, and the deliveries (read-only rows: status, attempts, last answer) with the actions
"Redeliver" and "Send a test ping"."""

from __future__ import annotations

import uuid
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from config.building_blocks.admin import ReadOnlyAdmin

from .models import (
    SUBSCRIBABLE_TYPES,
    URL_MAX_LENGTH,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
)
from .services import webhook_deliveries_redeliver, webhook_ping


class EndpointForm(forms.ModelForm):
    """The secret is typed in, never shown again: left empty on a change, the stored one stays."""

    url = forms.URLField(
        max_length=URL_MAX_LENGTH,
        assume_scheme="https",
        help_text=WebhookEndpoint._meta.get_field("url").help_text,
    )
    secret = forms.CharField(
        required=False,
        max_length=200,
        widget=forms.PasswordInput(render_value=False),
        help_text="Signs every delivery (HMAC-SHA256). Shown nowhere once saved; "
        "leave empty to keep the current one.",
    )
    event_types = forms.MultipleChoiceField(
        choices=[(t, t) for t in SUBSCRIBABLE_TYPES],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="None ticked: every event type.",
    )

    class Meta:
        model = WebhookEndpoint
        fields = (
            "url",
            "secret",
            "event_types",
            "boards",
            "active",
            "timeout_seconds",
            "concurrency",
        )

    def clean_secret(self) -> str:
        secret = self.cleaned_data["secret"]
        if secret:
            return secret
        if self.instance.pk is None:
            raise forms.ValidationError("A new endpoint needs a secret.")
        return self.instance.secret


def _pinged(model_admin: admin.ModelAdmin, request: HttpRequest, endpoints: list) -> None:
    for endpoint in endpoints:
        webhook_ping(endpoint=endpoint)
    model_admin.message_user(
        request, f"Sent a test ping to {len(endpoints)} endpoint(s).", messages.SUCCESS
    )


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(admin.ModelAdmin):
    form = EndpointForm
    list_display = (
        "url",
        "active",
        "types",
        "board_list",
        "timeout_seconds",
        "concurrency",
        "secret_shown",
        "health",
        "created_at",
    )
    list_filter = ("active",)
    filter_horizontal = ("boards",)
    actions = ["send_test_ping"]

    @admin.display(description="Health")
    def health(self, endpoint: WebhookEndpoint) -> str:
        if not endpoint.failing_attempts:
            return "answering"
        if endpoint.paused_until is None:
            return f"{endpoint.failing_attempts} failed in a row"
        until = f"{endpoint.paused_until:%Y-%m-%d %H:%M:%S} UTC"
        return f"{endpoint.failing_attempts} failed in a row; paused until {until}"

    @admin.display(description="Event types")
    def types(self, endpoint: WebhookEndpoint) -> str:
        return ", ".join(endpoint.event_types) or "every type"

    @admin.display(description="Boards")
    def board_list(self, endpoint: WebhookEndpoint) -> str:
        return ", ".join(board.slug for board in endpoint.boards.all()) or "every board"

    @admin.display(description="Secret")
    def secret_shown(self, endpoint: WebhookEndpoint) -> str:
        return "set (hidden)"

    def get_queryset(self, request: HttpRequest) -> QuerySet[WebhookEndpoint]:
        return super().get_queryset(request).prefetch_related("boards")

    @admin.action(description="Send a test ping", permissions=["change"])
    def send_test_ping(self, request: HttpRequest, queryset: QuerySet[WebhookEndpoint]) -> None:
        _pinged(self, request, list(queryset))


@admin.register(WebhookEvent)
class WebhookEventAdmin(ReadOnlyAdmin):
    list_display = ("id", "type", "board", "created_at")
    list_filter = ("type",)
    list_select_related = ("board",)
    readonly_fields = ("id", "type", "board", "created_at", "data")
    search_fields = ("id",)
    search_help_text = "An exact event id (the Leaderboard-Event-Id header)."

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Any], search_term: str
    ) -> tuple[QuerySet[Any], bool]:
        return _by_event_id(queryset, search_term, "pk"), False


def _by_event_id(queryset: QuerySet[Any], search_term: str, field: str) -> QuerySet[Any]:
    term = search_term.strip()
    if not term:
        return queryset
    try:
        event_id = uuid.UUID(term)
    except ValueError:
        return queryset.none()
    return queryset.filter(**{field: event_id})


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ReadOnlyAdmin):
    """Read-only rows: only the delivery writes them. Redeliver needs the change permission on
    deliveries, a test ping the change permission on endpoints."""

    list_display = (
        "event_id",
        "event_type",
        "endpoint",
        "status",
        "attempts",
        "last_status_code",
        "last_outcome",
        "created_at",
        "last_attempt_at",
        "next_attempt_at",
        "delivered_at",
    )
    list_filter = ("status", "event__type", "endpoint")
    list_select_related = ("event", "endpoint")
    ordering = ("-created_at",)
    readonly_fields = (
        "event",
        "event_type",
        "endpoint",
        "status",
        "attempts",
        "created_at",
        "last_attempt_at",
        "next_attempt_at",
        "give_up_at",
        "delivered_at",
        "locked_until",
        "last_status_code",
        "last_error",
        "last_answer",
    )
    search_fields = ("event__id",)
    search_help_text = "An exact event id (the Leaderboard-Event-Id header)."
    actions = ["redeliver", "send_test_ping"]

    @admin.display(description="Event type", ordering="event__type")
    def event_type(self, delivery: WebhookDelivery) -> str:
        return delivery.event.type

    @admin.display(description="Last answer or error")
    def last_outcome(self, delivery: WebhookDelivery) -> str:
        shown = delivery.last_error or delivery.last_answer
        return shown if len(shown) <= 80 else f"{shown[:80]}…"

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Any], search_term: str
    ) -> tuple[QuerySet[Any], bool]:
        return _by_event_id(queryset, search_term, "event_id"), False

    def has_redeliver_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("webhooks.change_webhookdelivery")

    def has_ping_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("webhooks.change_webhookendpoint")

    @admin.action(description="Redeliver (send again from now)", permissions=["redeliver"])
    def redeliver(self, request: HttpRequest, queryset: QuerySet[WebhookDelivery]) -> None:
        queued = webhook_deliveries_redeliver(
            delivery_ids=list(queryset.values_list("pk", flat=True))
        )
        self.message_user(request, f"Queued {queued} delivery(ies) again.", messages.SUCCESS)

    @admin.action(description="Send a test ping to their endpoints", permissions=["ping"])
    def send_test_ping(self, request: HttpRequest, queryset: QuerySet[WebhookDelivery]) -> None:
        endpoint_ids = set(queryset.values_list("endpoint_id", flat=True))
        _pinged(self, request, list(WebhookEndpoint.objects.filter(pk__in=endpoint_ids)))
