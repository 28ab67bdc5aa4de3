"""One POST of an event to an endpoint, and what came of it.

The standard library's http.client rather than a client library: it never follows a redirect
(a 3xx is the endpoint's answer, and counts as a failure), and a connection of ours connects to
the address the SSRF guard has just checked (addresses.py) while the request names the URL's
host (Host header, TLS server name and certificate check), so a DNS answer that changes between
the check and the connection (DNS rebinding) cannot send the POST to a private address. httpx
is only a development dependency here and offers no such pinning through its public API.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import time
from dataclasses import dataclass

from .addresses import Target, UrlRefused, target_resolve
from .signing import EVENT_ID_HEADER, SIGNATURE_HEADER, signature

# How much of an endpoint's answer is read and kept (for the admin); the rest is never read.
ANSWER_BYTES = 2000
USER_AGENT = "leaderboard-webhooks/1"


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one attempt came to: delivered on a 2xx; otherwise an error saying why."""

    delivered: bool
    status_code: int | None = None
    answer: str = ""
    error: str = ""


def _connect_checked(target: Target, timeout: float) -> socket.socket:
    """A TCP connection to the first of the checked addresses that answers, in the resolver's
    order (as socket.create_connection tries a name's addresses)."""
    refused: OSError | None = None
    for address in target.addresses:
        try:
            return socket.create_connection((address, target.port), timeout)
        except TimeoutError:
            raise
        except OSError as exc:
            refused = exc
    raise refused or OSError(f"no address to connect to for {target.host}")


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """An HTTP connection to a checked address, for the URL's host."""

    def __init__(self, target: Target, timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout)
        self.target = target

    def connect(self) -> None:
        self.sock = _connect_checked(self.target, self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """An HTTPS connection to a checked address; TLS still checks the URL's host name."""

    def __init__(self, target: Target, timeout: float) -> None:
        self.tls = ssl.create_default_context()
        super().__init__(target.host, target.port, timeout=timeout, context=self.tls)
        self.target = target

    def connect(self) -> None:
        sock = _connect_checked(self.target, self.timeout)
        self.sock = self.tls.wrap_socket(sock, server_hostname=self.host)


def event_post(*, url: str, secret: str, event_id: str, body: bytes, timeout: float) -> Outcome:
    """POST `body` to `url`, signed now; the whole exchange (connecting, sending, the answer's
    first ANSWER_BYTES) must be over within `timeout` seconds."""
    try:
        target = target_resolve(url)
    except UrlRefused as exc:
        return Outcome(delivered=False, error=f"refused: {exc}")
    deadline = time.monotonic() + timeout
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        SIGNATURE_HEADER: signature(secret=secret, body=body, timestamp=int(time.time())),
        EVENT_ID_HEADER: event_id,
    }
    opened = _PinnedHTTPSConnection if target.scheme == "https" else _PinnedHTTPConnection
    connection = opened(target, timeout)
    try:
        connection.request("POST", target.path, body=body, headers=headers)
        # What is left of the timeout bounds the wait for the answer and the read of it.
        connection.sock.settimeout(max(0.001, deadline - time.monotonic()))
        response = connection.getresponse()
        answer = response.read(ANSWER_BYTES).decode("utf-8", errors="replace")
    except TimeoutError:
        return Outcome(delivered=False, error=f"timed out: no answer within {timeout:g} s")
    except (OSError, http.client.HTTPException) as exc:
        return Outcome(delivered=False, error=f"{type(exc).__name__}: {exc}")
    finally:
        connection.close()
    status = response.status
    if 200 <= status < 300:
        return Outcome(delivered=True, status_code=status, answer=answer)
    if 300 <= status < 400:
        error = (
            f"redirect refused: answered {status} to {response.getheader('Location') or '?'};"
            " webhooks never follow redirects, register the final URL"
        )
    else:
        error = f"answered {status}"
    return Outcome(delivered=False, status_code=status, answer=answer, error=error)
