"""Two game servers posting at once: PostgreSQL's constraints keep every result exactly once."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from rest_framework.test import APIClient

from matches.models import MatchResult, PlayerTotal

pytestmark = pytest.mark.django_db(transaction=True)


def _post_many(api_key: str, bodies: list, barrier: threading.Barrier) -> list[int]:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Api-Key {api_key}")
    barrier.wait(timeout=10)
    try:
        return [api.post("/api/v1/scores", b, format="json").status_code for b in bodies]
    finally:
        connection.close()


def test_the_same_result_posted_by_two_threads_at_once_counts_once(api_key, season):
    body = {"player_id": "p1", "points": 50, "match_id": "m1"}
    barrier = threading.Barrier(2)

    with ThreadPoolExecutor(2) as pool:
        codes = [
            f.result(timeout=30)
            for f in [pool.submit(_post_many, api_key, [body], barrier) for _ in range(2)]
        ]

    assert sorted(c for [c] in codes) == [200, 201]
    assert MatchResult.objects.count() == 1
    assert PlayerTotal.objects.get().points == 50


def test_the_same_batch_posted_twice_at_once_counts_once(api_key, season):
    batch = [{"player_id": f"p{i % 7}", "points": i + 1, "match_id": f"m{i}"} for i in range(50)]
    barrier = threading.Barrier(2)

    with ThreadPoolExecutor(2) as pool:
        codes = [
            f.result(timeout=30)
            for f in [pool.submit(_post_many, api_key, [batch], barrier) for _ in range(2)]
        ]

    assert codes == [[200], [200]]
    assert MatchResult.objects.count() == 50
    expected = {f"p{p}": sum(i + 1 for i in range(50) if i % 7 == p) for p in range(7)}
    assert dict(PlayerTotal.objects.values_list("player_id", "points")) == expected


def test_crossing_batches_for_the_same_players_never_deadlock(api_key, season):
    forward = [{"player_id": f"p{i}", "points": 1, "match_id": f"a{i}"} for i in range(30)]
    backward = [{"player_id": f"p{i}", "points": 2, "match_id": f"b{i}"} for i in range(30)][::-1]
    barrier = threading.Barrier(2)

    with ThreadPoolExecutor(2) as pool:
        codes = [
            f.result(timeout=30)
            for f in [
                pool.submit(_post_many, api_key, [body] * 1, barrier)
                for body in (forward, backward)
            ]
        ]

    assert codes == [[200], [200]]
    assert set(PlayerTotal.objects.values_list("points", flat=True)) == {3}
