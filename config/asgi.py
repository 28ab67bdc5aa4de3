"""ASGI entry point: one server process answers HTTP and the live leaderboard's WebSockets.

uvicorn serves this app (Procfile). HTTP goes through three layers, outermost first:
RequestBodyLimit (413 before an oversized body is read), FastReads (the hottest public reads,
answered on the event loop: leaderboards/fast_reads.py) and Django's WSGI application run on a
fixed pool of threads by a2wsgi's WSGIMiddleware. Every Django view is synchronous; Django's own
ASGI handler would start a thread per request for them (216 trivial requests a second from two
processes on the benchmark, against 1,004 through the pool: README, "Serving stack").
"""

import gc
import json
import os

from a2wsgi import WSGIMiddleware
from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

# Set Django up before the routes import the apps' models.
django_application = get_wsgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from config.errors import error_body  # noqa: E402
from leaderboards.fast_reads import FastReads  # noqa: E402
from leaderboards.routing import websocket_urlpatterns  # noqa: E402


class RequestBodyLimit:
    """Request bodies over MAX_REQUEST_BODY_BYTES are answered 413 before they are read.

    A limit in the view's parser would come after the upload (Django reads a body it parses
    whole, and a2wsgi streams it in as the view reads). Here a body
    whose Content-Length is over the limit is refused without reading a byte (the server holds
    a body to its declared length), and a body sent without one (chunked) is read only up to
    the limit, then handed on with its length declared, so the views can read it too.
    """

    def __init__(self, app) -> None:  # noqa: ANN001
        self.app = app

    async def __call__(self, scope, receive, send) -> None:  # noqa: ANN001
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = settings.MAX_REQUEST_BODY_BYTES
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit():
            if int(declared) > limit:
                return await _payload_too_large(send, limit)
            return await self.app(scope, receive, send)
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None  # the client left before sending its body
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > limit:
                return await _payload_too_large(send, limit)
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        if body:
            headers = [(k, v) for k, v in scope["headers"] if k != b"content-length"]
            scope = {**scope, "headers": [*headers, (b"content-length", str(len(body)).encode())]}
        sent = False

        async def replay():  # noqa: ANN202
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await self.app(scope, replay, send)


async def _payload_too_large(send, limit: int) -> None:  # noqa: ANN001
    body = json.dumps(
        error_body("payload_too_large", f"The request body may be at most {limit} bytes.")
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                # The rest of the body stays unread: this connection cannot carry another request.
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


# What start-up made (Django, the apps, their modules) lives as long as the process: moved out
# of the collector's generations, it is not walked again by every full collection, which
# otherwise showed as pauses of the event loop in the reads' tail latency.
gc.freeze()
# A web process holding 5,000 live sockets tracks about 600,000 objects, and with the default
# thresholds a full collection walked them every few seconds under load, stopping the event
# loop for 250-800 ms each time (measured with gc.callbacks in the push benchmark at 10,000
# sockets and 6,000 results a second). A young generation of 50,000 objects lets the short-lived
# objects of requests and pushes die young instead of piling up in the old generation, whose
# growth is what starts a full collection: none longer than 20 ms in the same run.
gc.set_threshold(50_000, 20, 100)

application = ProtocolTypeRouter(
    {
        "http": RequestBodyLimit(
            FastReads(WSGIMiddleware(django_application, workers=settings.WEB_THREADS))
        ),
        # Browsers send an Origin header; a page on another site may not open our sockets.
        "websocket": AllowedHostsOriginValidator(URLRouter(websocket_urlpatterns)),
    }
)
