"""ASGI entry point: one server process answers HTTP and the live leaderboard's WebSockets."""

import os

from asgiref.sync import sync_to_async
from asgiref.wsgi import WsgiToAsgi, WsgiToAsgiInstance
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

# Set Django up before the WebSocket routes import the apps' models.
django_application = get_wsgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

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


application = ProtocolTypeRouter(
    {
        "http": PooledWsgiToAsgi(django_application),
        # Browsers send an Origin header; a page on another site may not open our sockets.
        "websocket": AllowedHostsOriginValidator(URLRouter(websocket_urlpatterns)),
    }
)
