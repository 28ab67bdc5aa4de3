"""The webhook tests' receivers (real HTTP servers on 127.0.0.1), endpoints pointed at them, and
the receivers' verification code as docs/webhooks.md gives it."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from scripts.receiver import Receiver
from tests.factories import WebhookEndpointFactory
from webhooks.models import WebhookEndpoint

DOCS = Path(__file__).resolve().parents[2] / "docs" / "webhooks.md"
SECRET = "whsec-tests-only"


def documented_verify() -> Callable[..., bool]:
    """`verify` from the docs' verification snippet (the one Python block that defines it),
    run as a receiver would paste it."""
    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(), flags=re.DOTALL)
    (snippet,) = [block for block in blocks if "def verify(" in block]
    namespace: dict[str, Any] = {}
    exec(compile(snippet, str(DOCS), "exec"), namespace)  # noqa: S102 - our own docs
    return namespace["verify"]


@pytest.fixture
def make_receiver() -> Iterator[Callable[[], Receiver]]:
    started: list[Receiver] = []

    def make() -> Receiver:
        receiver = Receiver().start()
        started.append(receiver)
        return receiver

    yield make
    for receiver in started:
        receiver.stop()


@pytest.fixture
def receiver(make_receiver: Callable[[], Receiver]) -> Receiver:
    return make_receiver()


@pytest.fixture
def endpoint(db: Any, receiver: Receiver) -> WebhookEndpoint:
    """An endpoint for every event type and board, at `receiver`, timing out after 1 s."""
    return WebhookEndpointFactory(url=receiver.url, secret=SECRET, timeout_seconds=1)
