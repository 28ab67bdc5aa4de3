"""A store that cannot answer is a 503 with the standard body, whatever way it fails: PostgreSQL
or Redis down, and a Redis Cluster whose node holding the read's slot is down or failing over."""

import pytest
import redis.exceptions
from django.db import OperationalError

from config.building_blocks.errors import api_error


@pytest.mark.parametrize(
    "failure",
    [
        redis.exceptions.ConnectionError("refused"),
        redis.exceptions.TimeoutError("timed out"),
        redis.exceptions.ClusterDownError("The cluster is down"),
        redis.exceptions.MasterDownError("MASTERDOWN"),
        redis.exceptions.TryAgainError("TRYAGAIN"),
        redis.exceptions.SlotNotCoveredError("no node covers slot 42"),
        OperationalError("server closed the connection"),
    ],
    ids=lambda failure: type(failure).__name__,
)
def test_a_store_that_cannot_answer_is_a_503_with_the_standard_body(failure):
    status, body, headers = api_error(failure)

    assert status == 503
    assert body["error"]["code"] == "unavailable"
    assert headers == {"Retry-After": "1"}
