"""A real HTTP receiver of webhooks, for the webhook tests and the push benchmark: a
ThreadingHTTPServer on a free port of 127.0.0.1, in a thread of the process that starts it,
recording every POST's raw body and headers. It can be down (stopped, then started again on the
same port), slow, answer any status, redirect, or speak HTTPS with a certificate it is given."""

from __future__ import annotations

import ssl
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from scripts.processes import free_port


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    arrived: float  # time.time() as the request arrived
    answered: int  # the status it is answered with


class Receiver:
    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.tls = tls
        self.port = free_port()
        self.received: list[Received] = []
        self.status = 200
        self.delay = 0.0
        self.location = ""
        self.in_flight = 0
        self.most_in_flight = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}/hooks"

    def start(self) -> Receiver:
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), _handler_of(self))
        if self.tls is not None:
            self._server.socket = self.tls.wrap_socket(self._server.socket, server_side=True)
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def event_ids(self, *, answered: int | None = None) -> list[str]:
        return [
            r.headers["Leaderboard-Event-Id"]
            for r in self.received
            if answered is None or r.answered == answered
        ]

    def note_arrival(self, received: Received) -> None:
        with self._lock:
            self.received.append(received)
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)

    def note_answered(self) -> None:
        with self._lock:
            self.in_flight -= 1


def _handler_of(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
            arrived = time.time()
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            status = receiver.status
            receiver.note_arrival(
                Received(self.path, dict(self.headers.items()), body, arrived, status)
            )
            try:
                if receiver.delay:
                    time.sleep(receiver.delay)
                answer = b"ok" if status < 300 else b"server says no"
                self.send_response(status)
                if receiver.location:
                    self.send_header("Location", receiver.location)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)
            except OSError:
                pass  # the sender gave up waiting (a slow receiver's timeout)
            finally:
                receiver.note_answered()

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    return Handler
