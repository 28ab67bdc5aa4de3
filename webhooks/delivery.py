"""Delivering the outbox: claim the deliveries that are due, POST them, record what came of each.

At least once: a delivery is `delivering` only while a worker holds its claim (`locked_until`,
the endpoint's timeout and a margin); a worker lost meanwhile leaves it to be claimed again, and
only a 2xx recorded makes it `delivered`. A failed attempt is tried again after an exponential
backoff with full jitter (a random wait up to WEBHOOK_RETRY_BASE_SECONDS × 2^(attempts - 1),
capped at WEBHOOK_RETRY_MAX_SECONDS), until WEBHOOK_GIVE_UP_SECONDS after the delivery was made:
a failed attempt from then on makes it `failed`.

A slow or dead endpoint holds back no one else. Each run posts on a pool of threads, every POST
bounded by its endpoint's timeout, and records each outcome as soon as it is in (claiming more
for the endpoint it freed), so a fast endpoint's deliveries go on while a slow one's wait for
their answers. One task per endpoint was the other way; but a worker process blocked on a slow
endpoint is a whole process gone from the pool, and a few dead endpoints would take every
process, while a thread waiting on a socket costs almost nothing. The tasks run on a queue of
their own (`webhooks`), so no endpoint ever delays the mirror. Each endpoint has at most its
`concurrency` deliveries in flight, counted across every worker: claims take the endpoint's row
lock (SKIP LOCKED: a worker claiming for it already is left to it). When more is due than a
run has threads, the endpoints take turns, one delivery each, so none waits behind another's
backlog; a dead endpoint's failures back off exponentially, so it soon takes few threads.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import datetime, timedelta
from time import monotonic

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q
from django.utils import timezone

from .models import DeliveryStatus, WebhookDelivery, WebhookEndpoint
from .sending import Outcome, event_post
from .signing import event_body

# A claim outlives its POST's timeout by this much: time to record the outcome.
CLAIM_MARGIN_SECONDS = 30
# A run claims for at most this long, then finishes what it posted; the sweep runs again.
CLAIMING_SECONDS = 60
# What is kept of an endpoint's answer and of an error, for the admin.
KEPT_CHARACTERS = 1000
# After this many failed attempts in a row an endpoint is paused as a whole, for the retries'
# backoff counted from there: a dead endpoint costs one attempt a pause, not one per delivery
# owed to it. Then one delivery at a time is tried until one passes, and all resume.
PAUSE_AFTER_FAILURES = 3


@dataclass(frozen=True, slots=True)
class Claim:
    """A delivery a worker holds: what it needs to POST, without the database."""

    delivery_id: int
    attempt: int
    endpoint_id: int
    # The endpoint's failed attempts in a row when it was claimed.
    endpoint_failures: int
    url: str
    secret: str
    timeout: int
    event_id: str
    body: bytes


def retry_delay(attempts: int) -> float:
    """Seconds to wait after `attempts` failed attempts: full jitter, a uniform draw up to the
    exponential ceiling, so the retries of many deliveries failed together spread out."""
    return random.uniform(0, retry_ceiling(attempts))


def retry_ceiling(attempts: int) -> float:
    exponent = min(max(attempts, 1) - 1, 32)
    return min(
        settings.WEBHOOK_RETRY_MAX_SECONDS, settings.WEBHOOK_RETRY_BASE_SECONDS * 2**exponent
    )


def _due(by: datetime) -> Q:
    """Owed and due: pending and its time has come, or claimed by a worker whose claim ran out."""
    return Q(status=DeliveryStatus.PENDING, next_attempt_at__lte=by) | Q(
        status=DeliveryStatus.DELIVERING, locked_until__lte=by
    )


def _shares(
    candidates: dict[WebhookEndpoint, list[WebhookDelivery]], limit: int
) -> dict[WebhookEndpoint, list[WebhookDelivery]]:
    """At most `limit` of the candidates, taken one per endpoint in turn, so that when there
    are more deliveries due than threads every endpoint still gets its turn."""
    shares: dict[WebhookEndpoint, list[WebhookDelivery]] = {e: [] for e in candidates}
    waiting = {endpoint: iter(rows) for endpoint, rows in candidates.items()}
    while waiting and limit > 0:
        for endpoint, rows in list(waiting.items()):
            delivery = next(rows, None)
            if delivery is None or limit <= 0:
                del waiting[endpoint]
                continue
            shares[endpoint].append(delivery)
            limit -= 1
    return shares


def deliveries_claim(
    *, due_by: datetime, now: datetime, limit: int, endpoint_ids: Sequence[int] | None = None
) -> list[Claim]:
    """Claim at most `limit` deliveries due by `due_by`, keeping each endpoint within its
    `concurrency` (its deliveries whose claim holds at `now` count)."""
    if limit <= 0:
        return []
    with transaction.atomic():
        owed = WebhookDelivery.objects.filter(_due(due_by), endpoint_id=OuterRef("pk"))
        endpoints = WebhookEndpoint.objects.filter(Exists(owed), active=True).filter(
            Q(paused_until__isnull=True) | Q(paused_until__lte=now)
        )
        if endpoint_ids is not None:
            endpoints = endpoints.filter(pk__in=endpoint_ids)
        # NO KEY UPDATE: claims for one endpoint take turns, while a change inserting its
        # deliveries (a foreign-key share lock on the endpoint) never waits for them.
        locked = endpoints.select_for_update(skip_locked=True, no_key=True).order_by("pk")
        candidates: dict[WebhookEndpoint, list[WebhookDelivery]] = {}
        for endpoint in locked:
            in_flight = WebhookDelivery.objects.filter(
                endpoint=endpoint, status=DeliveryStatus.DELIVERING, locked_until__gt=now
            ).count()
            # A failing endpoint is tried one delivery at a time, until one passes.
            failing = endpoint.failing_attempts >= PAUSE_AFTER_FAILURES
            room = min((1 if failing else endpoint.concurrency) - in_flight, limit)
            if room > 0:
                candidates[endpoint] = list(
                    WebhookDelivery.objects.select_for_update(skip_locked=True, of=("self",))
                    .filter(_due(due_by), endpoint=endpoint)
                    .select_related("event")
                    .order_by("next_attempt_at", "pk")[:room]
                )
        claims: list[Claim] = []
        for endpoint, taken in _shares(candidates, limit).items():
            if not taken:
                continue
            WebhookDelivery.objects.filter(pk__in=[delivery.pk for delivery in taken]).update(
                status=DeliveryStatus.DELIVERING,
                attempts=F("attempts") + 1,
                last_attempt_at=now,
                locked_until=now
                + timedelta(seconds=endpoint.timeout_seconds + CLAIM_MARGIN_SECONDS),
            )
            claims.extend(
                Claim(
                    delivery_id=delivery.pk,
                    attempt=delivery.attempts + 1,
                    endpoint_id=endpoint.pk,
                    endpoint_failures=endpoint.failing_attempts,
                    url=endpoint.url,
                    secret=endpoint.secret,
                    timeout=endpoint.timeout_seconds,
                    event_id=str(delivery.event_id),
                    body=event_body(delivery.event),
                )
                for delivery in taken
            )
    return claims


def delivery_record(*, claim: Claim, outcome: Outcome, now: datetime) -> None:
    """Write down what came of an attempt. A 2xx is kept whatever happened meanwhile (the
    receiver has it); a failure only while the claim is still this attempt's (one that ran out
    and was claimed again belongs to the newer attempt)."""
    kept = {
        "last_status_code": outcome.status_code,
        "last_answer": outcome.answer[:KEPT_CHARACTERS],
        "last_error": outcome.error[:KEPT_CHARACTERS],
        "locked_until": None,
    }
    with transaction.atomic():
        _endpoint_record(claim=claim, delivered=outcome.delivered, now=now)
        delivery = WebhookDelivery.objects.select_for_update().filter(pk=claim.delivery_id).first()
        if delivery is None:  # its endpoint was deleted meanwhile
            return
        if outcome.delivered:
            if delivery.status != DeliveryStatus.DELIVERED:
                WebhookDelivery.objects.filter(pk=delivery.pk).update(
                    status=DeliveryStatus.DELIVERED, delivered_at=now, **kept
                )
            return
        if delivery.status != DeliveryStatus.DELIVERING or delivery.attempts != claim.attempt:
            return
        if now >= delivery.give_up_at:
            WebhookDelivery.objects.filter(pk=delivery.pk).update(
                status=DeliveryStatus.FAILED, **kept
            )
            return
        # The last try falls at the give-up time at the latest, so a delivery is tried then.
        next_attempt_at = min(
            now + timedelta(seconds=retry_delay(claim.attempt)), delivery.give_up_at
        )
        WebhookDelivery.objects.filter(pk=delivery.pk).update(
            status=DeliveryStatus.PENDING, next_attempt_at=next_attempt_at, **kept
        )


def _endpoint_record(*, claim: Claim, delivered: bool, now: datetime) -> None:
    """An answer resumes a paused endpoint; a failure counts, and the PAUSE_AFTER_FAILURES-th
    in a row and every later one pause it for the retries' backoff from there."""
    endpoint = WebhookEndpoint.objects.filter(pk=claim.endpoint_id)
    if delivered:
        endpoint.filter(failing_attempts__gt=0).update(failing_attempts=0, paused_until=None)
        return
    failures = claim.endpoint_failures + 1
    paused_until = None
    if failures >= PAUSE_AFTER_FAILURES:
        delay = retry_delay(failures - PAUSE_AFTER_FAILURES + 1)
        paused_until = now + timedelta(seconds=delay)
    endpoint.update(failing_attempts=F("failing_attempts") + 1, paused_until=paused_until)


def deliveries_give_up_paused(*, now: datetime) -> int:
    """Deliveries owed to a paused endpoint past their give-up time are given up without an
    attempt (a paused endpoint tries one delivery a pause); returns how many."""
    paused = WebhookEndpoint.objects.filter(paused_until__gt=now).values("pk")
    return WebhookDelivery.objects.filter(
        status=DeliveryStatus.PENDING, give_up_at__lte=now, endpoint__in=paused
    ).update(
        status=DeliveryStatus.FAILED,
        last_error="given up while its endpoint was paused after failing",
    )


def _post(claim: Claim) -> Outcome:
    return event_post(
        url=claim.url,
        secret=claim.secret,
        event_id=claim.event_id,
        body=claim.body,
        timeout=claim.timeout,
    )


def deliveries_send_due(
    *, endpoint_ids: Sequence[int] | None = None, now: datetime | None = None
) -> int:
    """POST every delivery due now (of these endpoints, or of all), each endpoint within its
    concurrency, on WEBHOOK_DELIVERY_THREADS threads; returns how many attempts were made.
    Deliveries that fall due during the run are left to the next one (the sweep's), so a run
    makes at most one attempt of each. `now` fixes the clock (tests, reruns)."""
    clock: Callable[[], datetime] = (lambda: now) if now is not None else timezone.now
    due_by = clock()
    deliveries_give_up_paused(now=due_by)
    threads = settings.WEBHOOK_DELIVERY_THREADS
    claiming_until = monotonic() + CLAIMING_SECONDS
    attempts = 0
    # The pool's threads only talk HTTP; every database read and write stays on this thread.
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="webhook") as pool:
        in_flight: dict[Future[Outcome], Claim] = {}
        while True:
            if monotonic() < claiming_until:
                for claim in deliveries_claim(
                    due_by=due_by,
                    now=clock(),
                    limit=threads - len(in_flight),
                    endpoint_ids=endpoint_ids,
                ):
                    in_flight[pool.submit(_post, claim)] = claim
            if not in_flight:
                return attempts
            done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            for future in done:
                delivery_record(claim=in_flight.pop(future), outcome=future.result(), now=clock())
                attempts += 1
