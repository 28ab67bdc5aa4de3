"""Delivering the outbox to real HTTP receivers: signed as the docs verify it, the same event id
on every retry, nothing lost while a receiver is down and nothing it acknowledged sent twice, a
slow receiver timed out without holding back another endpoint, errors retried with a growing
backoff until the give-up time, redirects refused, each endpoint within its concurrency."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import time_machine
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from tests.factories import BoardFactory, WebhookEndpointFactory
from webhooks import tasks
from webhooks.delivery import deliveries_claim, deliveries_send_due, retry_ceiling
from webhooks.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint, WebhookEvent
from webhooks.services import webhook_event_emit
from webhooks.tasks import deliver_webhooks

from .conftest import SECRET, documented_verify

pytestmark = pytest.mark.django_db

BANNED = {"player_id": "p1", "reason": "aimbot", "banned_at": "2026-01-01T00:00:00+00:00"}


def emit(capture, data=BANNED, *, event_type="player.banned", board=None) -> WebhookEvent | None:
    """Emit one event and run the delivery its commit queues (Celery runs eagerly in tests);
    None when no endpoint wanted it (nothing is written then)."""
    earlier = list(WebhookEvent.objects.values_list("id", flat=True))
    with capture(execute=True):
        webhook_event_emit(event_type=event_type, data=data, board=board)
    return WebhookEvent.objects.exclude(id__in=earlier).first()


def only_delivery(endpoint=None) -> WebhookDelivery:
    deliveries = WebhookDelivery.objects.all()
    if endpoint is not None:
        deliveries = deliveries.filter(endpoint=endpoint)
    (delivery,) = deliveries
    return delivery


def test_a_delivery_is_a_signed_post_that_the_documented_snippet_verifies(
    endpoint, receiver, django_capture_on_commit_callbacks
):
    event = emit(django_capture_on_commit_callbacks)

    (post,) = receiver.received
    verify = documented_verify()
    assert post.path == "/hooks"
    assert post.headers["Content-Type"] == "application/json"
    assert post.headers["Leaderboard-Event-Id"] == str(event.id)
    assert json.loads(post.body) == {
        "id": str(event.id),
        "type": "player.banned",
        "created_at": event.created_at.isoformat(),
        "data": BANNED,
    }
    signature = post.headers["Leaderboard-Signature"]
    assert verify(SECRET, post.body, signature) is True
    # and: another secret, another body, or an old signature do not verify
    assert verify("another secret", post.body, signature) is False
    assert verify(SECRET, post.body.replace(b"aimbot", b"wallhack"), signature) is False
    old = signature.replace(signature.split(",")[0], "t=1000000000")
    assert verify(SECRET, post.body, old) is False
    delivery = only_delivery()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("delivered", 1, 200)
    assert (delivery.last_answer, delivery.last_error, delivery.locked_until) == ("ok", "", None)


def test_a_retry_sends_the_same_event_id_and_the_same_body(
    endpoint, receiver, django_capture_on_commit_callbacks
):
    # given: a first attempt answered 500
    receiver.status = 500
    event = emit(django_capture_on_commit_callbacks)
    failed = only_delivery()
    receiver.status = 200

    # when: the retry falls due
    deliveries_send_due(now=failed.next_attempt_at)

    # then
    first, second = receiver.received
    assert receiver.event_ids() == [str(event.id), str(event.id)]
    assert first.body == second.body
    assert documented_verify()(SECRET, second.body, second.headers["Leaderboard-Signature"])
    delivered = only_delivery()
    assert (delivered.status, delivered.attempts) == ("delivered", 2)


def test_a_receiver_down_then_up_gets_every_event_and_none_it_acknowledged_twice(
    endpoint, receiver, django_capture_on_commit_callbacks
):
    # given: two events acknowledged, then three while the receiver is down
    acknowledged = [emit(django_capture_on_commit_callbacks).id for _ in range(2)]
    receiver.stop()
    # The clock stands still while they fail: a first retry's jittered wait can be a few
    # milliseconds, and the next emit's sweep would retry it early.
    with time_machine.travel(timezone.now(), tick=False):
        missed = [emit(django_capture_on_commit_callbacks).id for _ in range(3)]
    waiting = WebhookDelivery.objects.filter(event_id__in=missed)
    assert sorted(waiting.values_list("status", "attempts")) == [("pending", 1)] * 3
    assert all(
        "ConnectionRefusedError" in error for error in waiting.values_list("last_error", flat=True)
    )

    # and: three failures in a row paused the endpoint as a whole
    endpoint.refresh_from_db()
    assert endpoint.failing_attempts == 3
    assert endpoint.paused_until is not None

    # when: it is back, and the sweep runs once every retry and the pause are due, and again
    receiver.start()
    latest = max([*waiting.values_list("next_attempt_at", flat=True), endpoint.paused_until])
    deliveries_send_due(now=latest)
    deliver_webhooks.delay()

    # then: each event arrived exactly once
    assert sorted(receiver.event_ids(answered=200)) == sorted(map(str, acknowledged + missed))
    assert len(receiver.received) == 5
    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {"delivered"}
    endpoint.refresh_from_db()
    assert (endpoint.failing_attempts, endpoint.paused_until) == (0, None)


def test_a_dead_endpoint_is_tried_once_a_pause_not_once_a_delivery(
    endpoint, receiver, django_capture_on_commit_callbacks
):
    # given: the receiver is down and the endpoint paused after its third failure in a row
    receiver.stop()
    with time_machine.travel(timezone.now(), tick=False):  # no retry falls due early
        for _ in range(3):
            emit(django_capture_on_commit_callbacks)
        endpoint.refresh_from_db()
        paused_until = endpoint.paused_until
        for _ in range(5):
            emit(django_capture_on_commit_callbacks)

    # when: runs come while it is paused, then one once the pause and every retry are due
    owed = WebhookDelivery.objects.filter(status=DeliveryStatus.PENDING)
    assert deliveries_send_due(now=paused_until - timedelta(microseconds=1)) == 0
    due = max([*owed.values_list("next_attempt_at", flat=True), paused_until])
    attempts = deliveries_send_due(now=due)

    # then: the five owed since the pause were never tried while it lasted, and the run after
    # it tried one delivery, the longest due (which failed, pausing it again)
    assert attempts == 1
    assert sorted(owed.values_list("attempts", flat=True)) == [0] * 4 + [1] * 4
    endpoint.refresh_from_db()
    assert endpoint.failing_attempts == 4
    assert endpoint.paused_until > due


def test_deliveries_owed_to_a_paused_endpoint_are_given_up_at_their_time(
    endpoint, receiver, django_capture_on_commit_callbacks
):
    receiver.stop()
    for _ in range(4):
        emit(django_capture_on_commit_callbacks)
    endpoint.refresh_from_db()
    give_up_at = max(WebhookDelivery.objects.values_list("give_up_at", flat=True))
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(
        paused_until=give_up_at + timedelta(hours=1)
    )

    assert deliveries_send_due(now=give_up_at) == 0

    assert set(WebhookDelivery.objects.values_list("status", "last_error")) == {
        ("failed", "given up while its endpoint was paused after failing")
    }


def test_a_slow_receiver_times_out_and_is_retried_without_delaying_another_endpoint(
    make_receiver, django_capture_on_commit_callbacks
):
    # given: the slow endpoint first (claimed first), answering after 2.5 s with a 1 s timeout
    slow_receiver, fast_receiver = make_receiver(), make_receiver()
    slow_receiver.delay = 2.5
    slow = WebhookEndpointFactory(url=slow_receiver.url, timeout_seconds=1)
    fast = WebhookEndpointFactory(url=fast_receiver.url, timeout_seconds=1)

    # when
    event = emit(django_capture_on_commit_callbacks)

    # then: the fast one was delivered before the slow one's attempt had even timed out
    timed_out, delivered = only_delivery(slow), only_delivery(fast)
    assert (delivered.status, delivered.attempts) == ("delivered", 1)
    assert delivered.delivered_at < timed_out.last_attempt_at + timedelta(seconds=1)
    assert (timed_out.status, timed_out.attempts) == ("pending", 1)
    assert timed_out.last_error == "timed out: no answer within 1 s"
    assert timed_out.last_status_code is None

    # and: retried once due, it is delivered with the same event id
    slow_receiver.delay = 0
    deliveries_send_due(now=timed_out.next_attempt_at)
    assert (only_delivery(slow).status, only_delivery(slow).attempts) == ("delivered", 2)
    assert slow_receiver.event_ids() == [str(event.id), str(event.id)]
    assert fast_receiver.event_ids() == [str(event.id)]


def test_a_500_is_retried_with_a_growing_backoff_until_the_give_up_time(
    endpoint, receiver, django_capture_on_commit_callbacks, settings
):
    receiver.status = 500
    emit(django_capture_on_commit_callbacks)
    first = only_delivery()
    # (recorded a moment after the attempt started)
    assert first.next_attempt_at - first.last_attempt_at <= timedelta(seconds=retry_ceiling(1) + 1)
    retries = [first.next_attempt_at]

    # when: each retry runs when it falls due (and its endpoint's pause, from the third failure
    # in a row, is over)
    for attempt in (2, 3, 4):
        endpoint.refresh_from_db()
        deliveries_send_due(now=max(retries[-1], endpoint.paused_until or retries[-1]))
        delivery = only_delivery()
        # then: tried again later each time, within the attempt's doubled ceiling
        assert delivery.attempts == attempt
        assert delivery.next_attempt_at > retries[-1]
        waited = delivery.next_attempt_at - delivery.last_attempt_at
        assert waited <= timedelta(seconds=settings.WEBHOOK_RETRY_BASE_SECONDS * 2 ** (attempt - 1))
        retries.append(delivery.next_attempt_at)
    assert (delivery.status, delivery.last_status_code) == ("pending", 500)
    assert (delivery.last_error, delivery.last_answer) == ("answered 500", "server says no")

    # when: an attempt fails at the give-up time
    deliveries_send_due(now=delivery.give_up_at)

    # then: given up, never tried again
    gave_up = only_delivery()
    assert (gave_up.status, gave_up.attempts) == ("failed", 5)
    assert gave_up.give_up_at - gave_up.created_at == timedelta(hours=24)
    deliveries_send_due(now=gave_up.give_up_at + timedelta(days=1))
    assert len(receiver.received) == 5


def test_retries_wait_a_random_time_under_a_doubling_ceiling_capped_at_an_hour():
    assert [retry_ceiling(n) for n in (1, 2, 3, 4, 9, 30)] == [10, 20, 40, 80, 2560, 3600]


def test_a_redirect_is_refused_and_not_followed(
    endpoint, receiver, make_receiver, django_capture_on_commit_callbacks
):
    elsewhere = make_receiver()
    receiver.status = 302
    receiver.location = elsewhere.url

    emit(django_capture_on_commit_callbacks)

    delivery = only_delivery()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("pending", 1, 302)
    assert delivery.last_error.startswith(f"redirect refused: answered 302 to {elsewhere.url};")
    assert len(receiver.received) == 1
    assert elsewhere.received == []


def test_each_endpoint_has_at_most_its_concurrency_in_flight(
    make_receiver, django_capture_on_commit_callbacks
):
    # given: two endpoints whose receivers take 0.3 s per POST, one taking 2 at once, one 4
    narrow_receiver, wide_receiver = make_receiver(), make_receiver()
    narrow_receiver.delay = wide_receiver.delay = 0.3
    WebhookEndpointFactory(url=narrow_receiver.url, concurrency=2)
    WebhookEndpointFactory(url=wide_receiver.url, concurrency=4)

    # when: six events in one transaction
    with django_capture_on_commit_callbacks(execute=True):
        for n in range(6):
            webhook_event_emit(event_type="player.banned", data={**BANNED, "player_id": f"p{n}"})

    # then: all delivered, never more at once than each endpoint allows
    assert narrow_receiver.most_in_flight == 2
    assert wide_receiver.most_in_flight == 4
    assert len(narrow_receiver.received) == len(wide_receiver.received) == 6
    assert set(WebhookDelivery.objects.values_list("status", "attempts")) == {("delivered", 1)}


def test_when_more_is_due_than_there_are_threads_every_endpoint_gets_its_turn(
    django_capture_on_commit_callbacks,
):
    # given: three events due to each of two endpoints that take four at once
    first, second = WebhookEndpointFactory(concurrency=4), WebhookEndpointFactory(concurrency=4)
    with django_capture_on_commit_callbacks(execute=False):
        for n in range(3):
            webhook_event_emit(event_type="player.banned", data={**BANNED, "player_id": f"p{n}"})

    # when: a run with room for two POSTs claims
    now = timezone.now()
    claims = deliveries_claim(due_by=now, now=now, limit=2)

    # then: one of each endpoint, not two of the first
    claimed = WebhookDelivery.objects.filter(pk__in=[claim.delivery_id for claim in claims])
    assert sorted(claimed.values_list("endpoint_id", "status", "attempts")) == [
        (first.pk, "delivering", 1),
        (second.pk, "delivering", 1),
    ]


def test_a_delivery_whose_worker_was_lost_is_claimed_again_after_its_claim_runs_out(
    endpoint, receiver, django_capture_on_commit_callbacks
):
    # given: a delivery a worker claimed and never finished (the broker lost the hint too)
    with django_capture_on_commit_callbacks(execute=False):
        webhook_event_emit(event_type="player.banned", data=BANNED)
    claimed = WebhookDelivery.objects.all()
    claimed.update(
        status=DeliveryStatus.DELIVERING, attempts=1, locked_until=only_delivery().created_at
    )

    # when: the sweep runs
    deliver_webhooks.delay()

    # then
    assert (only_delivery().status, only_delivery().attempts) == ("delivered", 2)
    assert len(receiver.received) == 1


def test_a_claim_still_held_is_left_to_its_worker(
    endpoint, receiver, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        webhook_event_emit(event_type="player.banned", data=BANNED)
    held = only_delivery()
    WebhookDelivery.objects.update(
        status=DeliveryStatus.DELIVERING,
        attempts=1,
        locked_until=held.created_at + timedelta(minutes=1),
    )

    deliveries_send_due(now=held.created_at + timedelta(seconds=30))

    assert receiver.received == []
    assert only_delivery().status == "delivering"


def test_a_change_rolled_back_tells_no_one(endpoint, receiver, django_capture_on_commit_callbacks):
    with (
        django_capture_on_commit_callbacks(execute=True),
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        webhook_event_emit(event_type="player.banned", data=BANNED)
        raise RuntimeError("the change fails")

    assert not WebhookEvent.objects.exists()
    assert not WebhookDelivery.objects.exists()
    assert receiver.received == []


def test_endpoints_get_only_the_event_types_and_boards_they_chose(
    make_receiver, django_capture_on_commit_callbacks
):
    # given
    receivers = {name: make_receiver() for name in ("every", "bans", "other board", "global")}
    global_board, other_board = BoardFactory(slug="global"), BoardFactory(slug="other")
    WebhookEndpointFactory(url=receivers["every"].url)
    WebhookEndpointFactory(url=receivers["bans"].url, event_types=["player.banned"])
    WebhookEndpointFactory(url=receivers["other board"].url, boards=[other_board])
    WebhookEndpointFactory(
        url=receivers["global"].url, event_types=["result.voided"], boards=[global_board]
    )

    # when: a ban (of no board) and a void on the global board
    ban = emit(django_capture_on_commit_callbacks)
    void = emit(
        django_capture_on_commit_callbacks,
        {"result_id": 1},
        event_type="result.voided",
        board=global_board,
    )

    # then
    assert {name: r.event_ids() for name, r in receivers.items()} == {
        "every": [str(ban.id), str(void.id)],
        "bans": [str(ban.id)],
        "other board": [str(ban.id)],
        "global": [str(void.id)],
    }


def test_an_inactive_endpoint_gets_no_new_deliveries(
    endpoint, receiver, django_capture_on_commit_callbacks
):
    endpoint.active = False
    endpoint.save(update_fields=["active"])

    emitted = emit(django_capture_on_commit_callbacks)

    assert emitted is None
    assert not WebhookDelivery.objects.exists()
    assert receiver.received == []


def test_hints_while_a_run_is_queued_queue_no_other_until_it_starts(monkeypatch, db):
    # given: the broker takes the run but no worker has started it yet
    queued: list[list[int]] = []
    monkeypatch.setattr(
        tasks.deliver_webhooks, "apply_async", lambda args, **_: queued.append(args[0])
    )
    first, second = WebhookEndpointFactory(), WebhookEndpointFactory()
    try:
        # when: commits keep hinting
        tasks.deliveries_queue(endpoint_ids=[first.pk])
        tasks.deliveries_queue(endpoint_ids=[first.pk])
        tasks.deliveries_queue(endpoint_ids=[first.pk, second.pk])
        # then: one run per endpoint waits
        assert queued == [[first.pk], [second.pk]]

        # and: once a run starts, the next commit's hint queues another
        tasks.deliver_webhooks.run([first.pk])
        tasks.deliveries_queue(endpoint_ids=[first.pk, second.pk])
        assert queued == [[first.pk], [second.pk], [first.pk]]
    finally:
        cache.delete_many([tasks.QUEUED_KEY.format(e.pk) for e in (first, second)])
