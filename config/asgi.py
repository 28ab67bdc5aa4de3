"""ASGI entry point: one server process answers HTTP and the live leaderboard's WebSockets."""

import json
import os

from asgiref.sync import sync_to_async
from asgiref.wsgi import WsgiToAsgi, WsgiToAsgiInstance
from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

# Set Django up before the WebSocket routes import the apps' models.
django_application = get_wsgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from config.errors import error_body  # noqa: E402
from leaderboards.routing import websocket_urlpatterns  # noqa: E402


class _PooledWsgiInstance(WsgiToAsgiInstance):
    # Any thread of the pool may serve a request: the views are synchronous and thread-safe,
    # and each thread takes its own connection from the database pool.
    run_wsgi_app = sync_to_async(
        WsgiToAsgiInstance.__dict__["run_wsgi_app"].func, thread_sensitive=False
    )


class PooledWsgiToAsgi(WsgiToAsgi):
    """Django's synchronous request handling, served from a pool of threads.

    Django's own ASGI handler starts a new thread for every request (a ThreadSensitiveContext
    per request, needed only by async views), which capped a trivial view at about 350
    requests a second per process here; the same views behind this adapter answered about
    1,200 (3,300 with two processes on the benchmark). Every view of the API and the pages is
    synchronous, so nothing is lost. asgiref's own WsgiToAsgi runs every request on one
    "thread-sensitive" thread, and under concurrent load that executor breaks ("already quit
    or is broken", 500s), so the threads here come from the default pool.
    """

    async def __call__(self, scope, receive, send):  # noqa: ANN001
        await _PooledWsgiInstance(self.wsgi_application, self.duplicate_header_limit)(
            scope, receive, send
        )


class RequestBodyLimit:
    """Request bodies over MAX_REQUEST_BODY_BYTES are answered 413 before they are read.

    The WSGI adapter (like Django's own ASGI handler) reads the whole body into a temporary file
    before any view runs, so a limit in the view's parser comes after the upload. Here a body
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


application = ProtocolTypeRouter(
    {
        "http": RequestBodyLimit(PooledWsgiToAsgi(django_application)),
        # Browsers send an Origin header; a page on another site may not open our sockets.
        "websocket": AllowedHostsOriginValidator(URLRouter(websocket_urlpatterns)),
    }
)
