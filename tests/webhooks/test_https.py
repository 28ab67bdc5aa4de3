"""An https endpoint: the POST goes to the address the guard checked, and TLS still checks the
certificate against the URL's host. A certificate the machine trusts is delivered to; one it
does not is a failed attempt, and nothing is sent."""

from __future__ import annotations

import json
import ssl
import subprocess

import pytest

from scripts.receiver import Receiver
from tests.factories import WebhookEndpointFactory
from webhooks.models import WebhookDelivery
from webhooks.services import webhook_event_emit

pytestmark = pytest.mark.django_db


@pytest.fixture
def certificate(tmp_path):
    """A self-signed certificate for 127.0.0.1 and its key, made by openssl."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]
        + [
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ]
        + ["-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
        timeout=30,
    )
    return cert, key


@pytest.fixture
def https_receiver(certificate):
    cert, key = certificate
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    receiver = Receiver(tls=tls).start()
    yield receiver
    receiver.stop()


def emit_one(capture) -> None:
    with capture(execute=True):
        webhook_event_emit(event_type="player.banned", data={"player_id": "p1"})


def test_an_https_endpoint_with_a_trusted_certificate_is_delivered_to(
    https_receiver, certificate, monkeypatch, django_capture_on_commit_callbacks
):
    # given: the machine trusts the receiver's certificate
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    WebhookEndpointFactory(url=https_receiver.url)

    emit_one(django_capture_on_commit_callbacks)

    (post,) = https_receiver.received
    assert json.loads(post.body)["type"] == "player.banned"
    assert post.headers["Host"] == f"127.0.0.1:{https_receiver.port}"
    assert WebhookDelivery.objects.get().status == "delivered"


def test_an_https_endpoint_whose_certificate_is_not_trusted_is_not_sent_to(
    https_receiver, django_capture_on_commit_callbacks
):
    WebhookEndpointFactory(url=https_receiver.url)

    emit_one(django_capture_on_commit_callbacks)

    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts) == ("pending", 1)
    assert delivery.last_error.startswith("SSLCertVerificationError: ")
    assert "certificate verify failed" in delivery.last_error
    assert https_receiver.received == []
