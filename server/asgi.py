"""ASGI entry point: one server process answers HTTP and the live leaderboard's WebSockets.

uvicorn serves this app (Procfile). This is the composition root, above every app: the one module
that assembles them into the process, so nothing below it imports upward. HTTP goes through
three layers, outermost first: RequestBodyLimit (413 before an oversized body is read:
config/building_blocks/request_body_limit.py), FastReads (the hottest public reads, answered on the
event loop:
leaderboards/fast_reads.py) and Django's WSGI application run on a fixed pool of threads by
a2wsgi's WSGIMiddleware. Every Django view is synchronous; Django's own ASGI handler would start a
thread per request for them (216 trivial requests a second from two processes on the benchmark,
against 1,004 through the pool: bench/README.md, "Serving stacks").
"""

import asyncio
import gc
import os
from typing import Any

from a2wsgi import WSGIMiddleware
from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

# Set Django up before the routes import the apps' models.
django_application = get_wsgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from config.building_blocks.request_body_limit import RequestBodyLimit  # noqa: E402
from leaderboards.fast_reads import FastReads  # noqa: E402
from leaderboards.identity import database_identity_warm  # noqa: E402
from leaderboards.routing import websocket_urlpatterns  # noqa: E402

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


async def lifespan(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The server's start and stop (ASGI lifespan): at start the process reads its database's
    identity, off the event loop, so no read waits on PostgreSQL for it. Not at import: a test
    process imports this module before its test database exists."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await asyncio.to_thread(database_identity_warm)
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


application = ProtocolTypeRouter(
    {
        "lifespan": lifespan,
        "http": RequestBodyLimit(
            FastReads(WSGIMiddleware(django_application, workers=settings.WEB_THREADS))
        ),
        # Browsers send an Origin header; a page on another site may not open our sockets.
        "websocket": AllowedHostsOriginValidator(URLRouter(websocket_urlpatterns)),
    }
)
